"""The whole book as one PDF, printed offline from the built site.

    forgetting pdf        # _build/html -> _build/html/forgetting-book.pdf

Jupyter Book 1's own PDF builder (``--builder pdfhtml``) needs a browser that playwright downloads,
and no TeX is installed, so the book is printed the way a reader would print it: every page of
``_toc.yml`` is opened from disk in Debian's headless Chromium (driven by selenium through
Debian's chromedriver, so nothing is downloaded), its images loaded and its math typeset, and
printed with ``driver.print_page()``; two browsers print at once, each its share of the pages.
pypdf merges the pages, in ``_toc.yml`` order, into one file with an outline (one entry per
part, one per chapter).

The browsers run with the flags of ``tests/test_site.py``: no host name resolves and any request
goes to a dead proxy, so a page that needs the network shows it. The file is made as
deterministic as pypdf allows: no creation or modification date, no document identifier, and
no links into the builder's own disk (``file://`` links, which a reader could not follow anyway).
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validate import int_problem, raise_problems
from .publish import PDF_NAME, PublishFailed, TocPage, check_site, page_html, toc_pages

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,1024",
    # Nothing leaves the machine: no host name resolves, and a request to an address goes to a
    # dead proxy on the loopback interface (tests/test_site.py browses the site the same way).
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=127.0.0.1:9",
)
PAGE_TIMEOUT = 60.0
#: Browsers that print the book's pages at once (:func:`print_book`).
PRINT_BROWSERS = 2
A4_CM = (21.0, 29.7)
MARGIN_CM = 1.2

SETTLE_PAGE = """
const done = arguments[arguments.length - 1];
const images = Array.from(document.images);
images.forEach(img => { img.loading = 'eager'; });
const loaded = Promise.all(images.map(img => img.complete ? null :
    new Promise(resolve => { img.addEventListener('load', resolve); img.addEventListener('error', resolve); })));
const typeset = (window.MathJax && MathJax.startup && MathJax.startup.promise) || Promise.resolve();
// every declared font face, not only those the screen layout used: print media can show text
// (icons, print-only elements) in a face the screen never loaded, and one loaded during the
// print would race it (the fallback font's glyphs would end up in the PDF)
const faces = Promise.all(Array.from(document.fonts, face => face.load().catch(() => null)));
Promise.all([loaded, typeset, faces]).then(() => document.fonts.ready)
    .then(() => done(true), error => done(String(error)));
"""

# Paper does not scroll: long code lines wrap instead of being cut at the right margin.
PRINT_STYLE = """
const style = document.createElement('style');
style.textContent = `@media print {
  pre, pre code { white-space: pre-wrap !important; overflow-wrap: anywhere; }
  div.highlight, div.highlight pre, div.cell_output, .output { overflow: visible !important; }
}`;
document.head.appendChild(style);
"""

# A folded block ("How this was checked") is printed open: paper has no fold to click. Opened
# before the page settles, so that what a fold holds (figures, math, fonts) is waited for too,
# and with transitions and animations off first: a fold's chevron turns in a 0.25 s transition
# (sphinx-design), and a print taken mid-turn, as on a loaded machine, gave other bytes.
OPEN_FOLDS = """
const still = document.createElement('style');
still.textContent = '*, *::before, *::after { transition: none !important; animation: none !important; }';
document.head.appendChild(still);
document.querySelectorAll('details').forEach(node => { node.open = true; });
"""


PAGE_TITLE = """
const heading = document.querySelector('main h1, article h1, h1');
if (!heading) return document.title;
const copy = heading.cloneNode(true);
copy.querySelectorAll('.headerlink').forEach(node => node.remove());
return copy.textContent.replace(/\\s+/g, ' ').trim();
"""


class PdfFailed(PublishFailed):
    """The browser is missing or a page could not be printed; the message is one line."""


@dataclass(frozen=True)
class PrintedPage:
    """One page of the table of contents, printed.

    Attributes
    ----------
    page : TocPage
        The table-of-contents entry.
    title : str
        The page's first heading.
    pdf : bytes
        The page printed by Chromium (one or more PDF pages).
    """

    page: TocPage
    title: str
    pdf: bytes


def browser_binaries() -> tuple[str, str]:
    """Chromium and chromedriver (``CHROMIUM``, ``CHROMEDRIVER`` override), or :class:`PdfFailed`."""
    for binary in (CHROMIUM, CHROMEDRIVER):
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            raise PdfFailed(f"{binary} is missing: apt-get install chromium chromium-driver")
    return CHROMIUM, CHROMEDRIVER


def start_browser(profile: Path) -> Any:
    """Headless Chromium through an explicit chromedriver: selenium never looks for or downloads one."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, chromedriver = browser_binaries()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    driver.set_page_load_timeout(PAGE_TIMEOUT)
    driver.set_script_timeout(PAGE_TIMEOUT)
    return driver


def print_options() -> Any:
    """A4, with margins and backgrounds (code cells and admonitions keep their shading)."""
    from selenium.webdriver.common.print_page_options import PrintOptions

    options = PrintOptions()
    options.page_width, options.page_height = A4_CM
    for side in ("top", "bottom", "left", "right"):
        setattr(options, f"margin_{side}", MARGIN_CM)
    options.background = True
    return options


def print_page(driver: Any, html: Path) -> tuple[str, bytes]:
    """Open one built page, wait for images, fonts and MathJax, and print it; (title, PDF bytes)."""
    import base64

    driver.get(html.as_uri())
    deadline = time.monotonic() + PAGE_TIMEOUT
    while driver.execute_script("return document.readyState") != "complete":
        if time.monotonic() > deadline:
            raise PdfFailed(f"{html.name} did not finish loading in {PAGE_TIMEOUT:.0f} s")
        time.sleep(0.05)
    driver.execute_script(OPEN_FOLDS)
    settled = driver.execute_async_script(SETTLE_PAGE)
    if settled is not True:
        raise PdfFailed(f"{html.name} did not render: {settled}")
    driver.execute_script(PRINT_STYLE)
    return driver.execute_script(PAGE_TITLE), base64.b64decode(driver.print_page(print_options()))


def _print_share(
    root: Path, pages: Sequence[TocPage], take: Callable[[], int | None], stop: threading.Event
) -> dict[int, PrintedPage]:
    """Print, in one browser session of its own (closed at the end, also on failure), the pages
    ``pages[i]`` for each index ``take()`` hands out until it hands out ``None``; ends early, with
    what it printed, once ``stop`` is set (another browser failed)."""
    profile = Path(tempfile.mkdtemp(prefix="forgetting-pdf-profile-"))
    driver = None
    printed: dict[int, PrintedPage] = {}
    try:
        driver = start_browser(profile)
        while not stop.is_set() and (index := take()) is not None:
            title, pdf = print_page(driver, page_html(root, pages[index]))
            printed[index] = PrintedPage(pages[index], title, pdf)
    except BaseException:
        stop.set()
        raise
    finally:
        if driver is not None:
            driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    return printed


def print_book(root: Path, pages: Sequence[TocPage], browsers: int = PRINT_BROWSERS) -> list[PrintedPage]:
    """Print every page, returned in the order of ``pages``.

    ``browsers`` Chromium sessions print at once. A browser that is done with a page takes the
    next one not yet taken, the largest built pages first (by the size of their HTML, so that the
    browsers finish together); a page's PDF does not depend on which browser printed it, or when.
    The first failure stops the other browsers after their current page and is raised. Raises
    ``ValueError`` unless ``browsers`` is an int >= 1.
    """
    raise_problems([int_problem("browsers", browsers, minimum=1)])
    if not pages:
        return []
    sizes = [path.stat().st_size if (path := page_html(root, page)).is_file() else 0 for page in pages]
    order = sorted(range(len(pages)), key=lambda i: -sizes[i])  # a missing page fails when printed
    queue, lock = iter(order), threading.Lock()

    def take() -> int | None:
        with lock:
            return next(queue, None)

    stop = threading.Event()
    count = min(browsers, len(pages))
    with ThreadPoolExecutor(count, thread_name_prefix="forgetting-pdf") as pool:
        futures = [pool.submit(_print_share, root, pages, take, stop) for _ in range(count)]
        printed = {i: page for future in futures for i, page in future.result().items()}  # the first failure
    return [printed[i] for i in range(len(pages))]


def drop_local_links(page: Any) -> None:
    """Remove link annotations to ``file://`` URLs (paths on the builder's disk) from a pypdf page."""
    from pypdf.generic import ArrayObject, NameObject

    annotations = page.get("/Annots")
    if annotations is None:
        return
    kept = ArrayObject()
    for reference in annotations.get_object():
        action = reference.get_object().get("/A")
        uri = str(action.get_object().get("/URI", "")) if action is not None else ""
        if not uri.startswith("file:"):
            kept.append(reference)
    if kept:
        page[NameObject("/Annots")] = kept
    else:
        del page["/Annots"]


def merge(printed: Sequence[PrintedPage], title: str) -> bytes:
    """One PDF: the printed pages in order, an outline entry per part and per page, no dates.

    Parameters
    ----------
    printed : sequence of PrintedPage
        The pages, in reading order.
    title : str
        The document title (``/Title``).

    Returns
    -------
    bytes
        The merged PDF.
    """
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    starts, parts = [], {}
    for item in printed:
        starts.append(len(writer.pages))
        writer.append(PdfReader(io.BytesIO(item.pdf)), import_outline=False)
    for page in writer.pages:
        drop_local_links(page)
    for item, start in zip(printed, starts):
        parent = None
        if item.page.part is not None:
            if item.page.part not in parts:
                parts[item.page.part] = writer.add_outline_item(title=item.page.part, page_number=start)
            parent = parts[item.page.part]
        writer.add_outline_item(title=item.title, page_number=start, parent=parent)
    writer.metadata = None  # drops pypdf's default /Producer; Chromium's dates never get copied
    writer.add_metadata({"/Title": title, "/Creator": "forgetting pdf (Chromium print, pypdf merge)"})
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def book_title(root: Path) -> str:
    """The ``title`` of ``_config.yml``."""
    import yaml

    return str(yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8")).get("title", "book"))


def build_pdf(root: Path) -> Path:
    """Print every page of the built site in ``_toc.yml`` order into ``_build/html/forgetting-book.pdf``.

    Parameters
    ----------
    root : Path
        The book root; its site must be built and up to date.

    Returns
    -------
    Path
        The PDF, inside the site so that the site can link it.

    Raises
    ------
    SiteNotReady
        The site is missing or older than ``_executed/``.
    PdfFailed
        No Chromium or chromedriver, or a page failed to load or render.
    """
    site = check_site(root, with_pdf=False)
    browser_binaries()
    try:
        printed = print_book(root, toc_pages(root))
    except PdfFailed:
        raise
    except Exception as error:  # selenium's errors carry multi-line messages and stack traces
        reason = str(getattr(error, "msg", None) or error).strip().splitlines()
        raise PdfFailed(
            f"printing the book failed: {reason[0] if reason else type(error).__name__}"
        ) from error
    target = site / PDF_NAME
    partial = target.with_name(f".{PDF_NAME}.{os.getpid()}.partial")
    partial.write_bytes(merge(printed, book_title(root)))
    partial.replace(target)
    return target
