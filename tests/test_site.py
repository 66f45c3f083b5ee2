"""The built site, opened from disk in headless Chromium: every page, no network, math rendered, search works.

The module builds its own site: ``_config.yml``, ``_toc.yml``, ``book/`` and ``data/`` are copied
into a temporary folder, the chapters the table of contents names are executed at their quick
(smoke) parameters, and ``jupyter-book build -W -n`` renders them (``FORGETTING_SITE=<path to
_build/html>`` tests an existing build instead, for a quick local check). Then every HTML page is
loaded through a ``file://`` URL in Debian's Chromium, driven by selenium through Debian's
chromedriver (no browser download), with all host names unresolvable, and each page must have

* no console error (a SEVERE log entry),
* no request for anything but local files,
* no broken image (``naturalWidth == 0``) and no ``<figure>`` without an ``<img>``,
* every math element typeset by MathJax, at least as many typeset formulas as its source has, and
  no raw TeX delimiters (``$$``, ``\\(``, ``\\[``, ``$x$``, ``\\begin{``) left in its text.

A query typed into the search box must find pages. Without Chromium or chromedriver
(``apt-get install chromium chromium-driver``) the tests fail in CI (``CI`` set) and are skipped
elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from api_names import documented_name, every_public_name
from forgetting.pipeline.chapters import CHAPTERS

# The same offline browser the PDF is printed with (no host resolves; requests go to a dead proxy).
from forgetting.pipeline.pdf import A4_CM, CHROMEDRIVER, CHROMIUM, CHROMIUM_FLAGS, MARGIN_CM
from forgetting.pipeline.tables import TABLE_CLASS

pytestmark = pytest.mark.book

LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")
SEARCH_QUERY = "retention"  # a word of the introduction, so every build has hits
PAGE_TIMEOUT = 30.0


def _unavailable(reason: str) -> None:
    """Fail in CI (a missing browser must not pass silently), skip on a developer's machine."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


# --- the site -------------------------------------------------------------------------------------


def toc_chapters(root: Path) -> list[str]:
    """Every page the table of contents of ``root`` renders, in order (root page first)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    return [toc["root"]] + [c["file"] for part in toc.get("parts", []) for c in part["chapters"]]


@pytest.fixture(scope="module")
def site(request) -> Path:
    """``_build/html`` of the session's quick build (or ``FORGETTING_SITE``, an existing build)."""
    if os.environ.get("FORGETTING_SITE"):
        html = Path(os.environ["FORGETTING_SITE"]).resolve()
        assert (html / "index.html").is_file(), f"FORGETTING_SITE={html} holds no built site"
        return html
    root, _ = request.getfixturevalue("built_book")
    return root / "_build" / "html"


def site_pages(html: Path) -> list[Path]:
    """Every HTML page of the site (the theme's own static files excluded)."""
    return sorted(p for p in html.rglob("*.html") if "_static" not in p.relative_to(html).parts)


# --- static checks (no browser) -----------------------------------------------------------------

REMOTE_ASSET = re.compile(
    r"""<(?:script|img|iframe|source|audio|video|embed)\b[^>]*\bsrc\s*=\s*["']?(?:https?:)?//"""
    r"""|<link\b(?=[^>]*\brel\s*=\s*["']?(?:stylesheet|preload|modulepreload|icon|shortcut icon|"""
    r"""preconnect|dns-prefetch|manifest))[^>]*\bhref\s*=\s*["']?(?:https?:)?//"""
    r"""|@import\s+(?:url\()?["']?(?:https?:)?//"""
    r"""|url\(\s*["']?(?:https?:)?//""",
    re.I,
)


def test_pages_reference_no_remote_asset(site):
    """No page or stylesheet pulls a script, style, font or image from another host."""
    offenders = []
    for path in [*site_pages(site), *(site / "_static").rglob("*.css")]:
        for match in REMOTE_ASSET.finditer(path.read_text(encoding="utf-8", errors="replace")):
            offenders.append(f"{path.relative_to(site)}: {match.group(0)[:120]}")
    assert offenders == []


NUMREF = re.compile(
    r'<a class="reference internal" href="([^"#]*)#([^"]+)"><span class="std std-numref">([^<]+)</span>'
)
CAPTION_NUMBER = re.compile(r'<span class="caption-number">([^<]+?) </span>')


def test_every_numbered_reference_names_its_targets_number(site):
    """A ``{numref}`` link reads "Fig. N" or "Table N" where its target's own caption does
    (the site's ``forgetting.pipeline.sphinx_numref`` resolves them from doctrees read once)."""
    pages = {path.relative_to(site).as_posix(): path.read_text(encoding="utf-8") for path in site_pages(site)}
    checked, wrong = 0, []
    for name, text in pages.items():
        for target, anchor, shown in NUMREF.findall(text):
            page = pages[target or name]
            caption = CAPTION_NUMBER.search(page, page.index(f'id="{anchor}"'))
            checked += 1
            if caption is None or caption.group(1) != shown:
                wrong.append(
                    f"{name} -> {target}#{anchor}: {shown!r}, caption {caption and caption.group(1)!r}"
                )
    figures = len(re.findall(r"<figure\b", "".join(pages.values())))
    assert wrong == [] and checked >= figures > 0, (checked, figures, wrong[:5])


def api_entries(site: Path) -> dict[str, str]:
    """Every Python object of the site's ``objects.inv``: its name -> its address in the site."""
    from sphinx.util.inventory import InventoryFile

    with open(site / "objects.inv", "rb") as stream:
        inventory = InventoryFile.load(stream, "", lambda base, uri: uri)
    return {
        name: entry[2]
        for kind, names in inventory.items()
        if kind.startswith("py:")
        for name, entry in names.items()
    }


def entry_text(page: str, name: str) -> str:
    """The text of the description (``<dd>``) of the entry with id ``name`` of an HTML page."""
    match = re.search(rf'id="{re.escape(name)}".*?<dd>(.*?)</dd>', page, re.S)
    return re.sub(r"<[^>]+>", "", match[1]).strip() if match else ""


def test_api_page_documents_every_public_name(site):
    """The API reference has an entry, with its docstring, for every public name of the library
    (``forgetting.__all__`` at the top level, every other name of a subpackage's ``__all__`` or of
    a public module: ``tests/api_names.py``), read from the site's ``objects.inv``: a new public
    name without documentation fails."""
    entries = api_entries(site)
    page = (site / "api.html").read_text(encoding="utf-8")
    names = sorted({documented_name(modname, name) for modname, name in every_public_name()})
    assert (
        len(names) > 100 and "forgetting.MemoryWorth" in names and "forgetting.worth.MemoryWorth" not in names
    )
    assert {name: entries.get(name) for name in names if entries.get(name) != f"api.html#{name}"} == {}
    assert [name for name in names if not entry_text(page, name)] == []


def test_math_renderer_is_bundled(site):
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert list((site / "_static" / "mathjax" / "output" / "chtml" / "fonts").rglob("*.woff"))
    pages_with_math = [p for p in site_pages(site) if 'class="math' in p.read_text(encoding="utf-8")]
    assert pages_with_math, "no page has math: the math checks below would prove nothing"
    for page in pages_with_math:
        assert "_static/mathjax/tex-chtml.js" in page.read_text(encoding="utf-8"), page.name


# --- sources: how much math each page should show ---------------------------------------------

FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n.*?^(?P=fence)[ \t]*$", re.M | re.S)
AMS_ENV = re.compile(r"^[ \t]*\\begin\{(?P<env>[A-Za-z*]+)\}.*?\\end\{(?P=env)\}", re.M | re.S)
DISPLAY = re.compile(r"\$\$.+?\$\$", re.S)
INLINE = re.compile(r"(?<![\\$])\$(?=[^\s$])[^$\n]*?(?<=[^\s\\])\$(?!\$)")
MATH_ROLE = re.compile(r"\{math\}`[^`]+`")
INLINE_CODE = re.compile(r"(`+).+?\1", re.S)


def source_math_count(markdown: str) -> int:
    """Formulas in a MyST text: math directives and roles, ``$$…$$``, amsmath environments, ``$…$``."""
    count = 0

    def fence(match: re.Match) -> str:
        nonlocal count
        count += match.group("info").strip().startswith("{math}")
        return "\n"

    text = FENCE.sub(fence, markdown)
    count += len(MATH_ROLE.findall(text))
    text = MATH_ROLE.sub(" ", text)
    text = INLINE_CODE.sub(" ", text)
    for pattern in (DISPLAY, AMS_ENV):
        count += len(pattern.findall(text))
        text = pattern.sub(" ", text)
    return count + len(INLINE.findall(text))


def page_source_text(html: Path, page: Path) -> str:
    """The MyST text a page was rendered from (its markdown cells, for a notebook), or ''."""
    stem = page.relative_to(html).with_suffix("")
    for suffix in (".md", ".ipynb"):
        source = html / "_sources" / stem.with_suffix(suffix)
        if source.is_file():
            if suffix == ".md":
                return source.read_text(encoding="utf-8")
            cells = json.loads(source.read_text(encoding="utf-8"))["cells"]
            return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return ""


def test_source_math_count():
    text = (
        "Inline $R = e^{-t/S}$ and $W$, not $5 or $ 6 $, nor `$x$`.\n\n"
        "$$\nS \\leftarrow S (1 + \\ln(1 + n))\n$$\n\n"
        "```python\nprice = '$1 and $2'\n```\n\n"
        "```{math}\n:label: eq\nx\n```\n\n"
        "\\begin{align}\na &= b\n\\end{align}\n\nand {math}`\\theta`."
    )
    assert source_math_count(text) == 6


# --- the browser ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    for binary in (CHROMIUM, CHROMEDRIVER):
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            _unavailable(f"{binary} is missing: apt-get install chromium chromium-driver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("selenium is not installed: pip install -r requirements/site.txt")
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    # An explicit driver path: selenium never looks for (or downloads) a driver or a browser.
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(PAGE_TIMEOUT)
    driver.set_script_timeout(PAGE_TIMEOUT)
    try:
        driver.get("about:blank")
        driver.get_log("browser"), driver.get_log("performance")  # drop the start-up noise
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_for(driver, script: str, timeout: float = PAGE_TIMEOUT) -> Any:
    """Poll a JavaScript expression until it is truthy; return its value (or the last falsy one)."""
    deadline = time.monotonic() + timeout
    while True:
        value = driver.execute_script(f"return ({script});")
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


SETTLE_PAGE = """
const done = arguments[arguments.length - 1];
const images = Array.from(document.images);
images.forEach(img => { img.loading = 'eager'; });   // lazy images off screen load too
const loaded = Promise.all(images.map(img => img.complete ? null :
    new Promise(resolve => { img.addEventListener('load', resolve); img.addEventListener('error', resolve); })));
const typeset = (window.MathJax && MathJax.startup && MathJax.startup.promise) || Promise.resolve();
Promise.all([loaded, typeset]).then(() => done(true), error => done('MathJax failed: ' + error));
"""

INSPECT_PAGE = """
const body = document.body.cloneNode(true);
body.querySelectorAll('pre, code, script, style, textarea, mjx-container, .highlight').forEach(n => n.remove());
return {
  url: location.href,
  broken_images: Array.from(document.images)
      .filter(img => !img.complete || img.naturalWidth === 0).map(img => img.getAttribute('src')),
  figures_without_image: Array.from(document.querySelectorAll('figure'))
      .filter(fig => !fig.querySelector('img')).map(fig => fig.id || fig.outerHTML.slice(0, 200)),
  math_elements: document.querySelectorAll('.math').length,
  untypeset_math: Array.from(document.querySelectorAll('.math'))
      .filter(el => !el.querySelector('mjx-container')).map(el => el.textContent.trim().slice(0, 80)),
  typeset: document.querySelectorAll('mjx-container').length,
  mathjax_errors: document.querySelectorAll('mjx-merror, [data-mjx-error]').length,
  text: body.textContent,
};
"""

RAW_TEX = re.compile(r"\$\$|\\\(|\\\)|\\\[|\\\]|\\begin\{|" + INLINE.pattern)


def remote_requests(performance_log: list[dict]) -> list[str]:
    """URLs that pages (``file://`` documents) asked for from anywhere but the local disk."""
    urls = []
    for entry in performance_log:
        message = json.loads(entry["message"])["message"]
        if message.get("method") != "Network.requestWillBeSent":
            continue
        params = message["params"]
        if str(params.get("documentURL", "")).startswith("file:"):
            url = params["request"]["url"]
            if not url.startswith(LOCAL_SCHEMES):
                urls.append(url)
    return urls


@pytest.fixture(scope="module")
def visits(site, browser) -> dict[str, dict]:
    """Load every page once; what each showed, keyed by its path in the site."""
    reports = {}
    for page in site_pages(site):
        name = page.relative_to(site).as_posix()
        browser.get(page.as_uri())
        wait_for(browser, "document.readyState === 'complete'")
        settled = browser.execute_async_script(SETTLE_PAGE)
        report = browser.execute_script(INSPECT_PAGE)
        report["settled"] = settled
        report["console_errors"] = [
            e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"
        ]
        report["remote_requests"] = remote_requests(browser.get_log("performance"))
        report["source_math"] = source_math_count(page_source_text(site, page))
        reports[name] = report
    return reports


def test_every_page_is_visited(site, visits):
    names = set(visits)
    assert {"index.html", "search.html", "genindex.html", "intro.html"} <= names
    root = site.parent.parent  # the book root of <root>/_build/html
    if (root / "_toc.yml").is_file():
        for page in toc_chapters(root):  # every page at <site>/<page>.html: no build folder in a URL
            assert f"{page}.html" in names
    assert not [n for n in names if "_executed" in n or n.startswith("book/")]
    assert all(report["settled"] is True for report in visits.values()), {
        name: report["settled"] for name, report in visits.items() if report["settled"] is not True
    }


def test_no_console_errors(visits):
    assert {name: r["console_errors"] for name, r in visits.items() if r["console_errors"]} == {}


def test_nothing_is_requested_from_the_network(visits):
    assert {name: r["remote_requests"] for name, r in visits.items() if r["remote_requests"]} == {}


def test_no_broken_images(visits):
    assert {name: r["broken_images"] for name, r in visits.items() if r["broken_images"]} == {}


def test_every_figure_has_an_image(visits):
    assert {
        name: r["figures_without_image"] for name, r in visits.items() if r["figures_without_image"]
    } == {}


def test_math_is_rendered(visits):
    problems = {}
    for name, r in visits.items():
        issues = []
        if r["untypeset_math"]:
            issues.append(f"math left untypeset: {r['untypeset_math']}")
        if r["mathjax_errors"]:
            issues.append(f"{r['mathjax_errors']} MathJax error(s)")
        if r["typeset"] < r["source_math"]:
            issues.append(f"the source has {r['source_math']} formulas, the page shows {r['typeset']}")
        raw = sorted({m.group(0) for m in RAW_TEX.finditer(r["text"])})
        if raw:
            issues.append(f"raw TeX in the text: {raw[:10]}")
        if issues:
            problems[name] = issues
    assert problems == {}
    assert sum(r["typeset"] for r in visits.values()) > 0, "no typeset formula anywhere"


def _search_hits(driver) -> int:
    hits = wait_for(driver, "document.querySelectorAll('#search-results ul.search li').length")
    return int(hits or 0)


def test_search_page_finds_a_query(site, browser):
    browser.get((site / "search.html").as_uri() + f"?q={SEARCH_QUERY}")
    assert _search_hits(browser) > 0


def test_query_typed_into_the_search_box_finds_pages(site, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.get((site / "intro.html").as_uri())
    wait_for(browser, "document.readyState === 'complete'")
    buttons = [
        b for b in browser.find_elements(By.CSS_SELECTOR, ".search-button__button") if b.is_displayed()
    ]
    assert buttons, "no visible search button"
    buttons[0].click()
    box = [i for i in browser.find_elements(By.CSS_SELECTOR, "input[name='q']") if i.is_displayed()]
    assert box, "the search button opened no search box"
    box[0].send_keys(SEARCH_QUERY, Keys.ENTER)
    assert wait_for(browser, "location.pathname.endsWith('/search.html')"), browser.current_url
    assert f"q={SEARCH_QUERY}" in browser.current_url
    assert _search_hits(browser) > 0
    assert [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


#: The printed page's text width in CSS pixels: A4 less the PDF's margins (``forgetting.pipeline.pdf``).
A4_TEXT_WIDTH_PX = round((A4_CM[0] - 2 * MARGIN_CM) / 2.54 * 96)


def test_every_table_fits_the_printed_page(site, browser):
    """Laid out for print at the PDF's text width, no table of the book is wider than the text
    around it, so the PDF cuts none off (on screen a wider one would scroll)."""
    measure = (
        "return Array.from(document.querySelectorAll(arguments[0]))"
        ".map(t => [t.id, t.scrollWidth, t.parentElement.clientWidth]);"
    )
    size = browser.get_window_size()
    browser.set_window_size(A4_TEXT_WIDTH_PX, 1200)
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        tables = []
        for name in CHAPTERS:
            browser.get((site / f"{name}.html").as_uri())
            tables += browser.execute_script(measure, f"table.{TABLE_CLASS}")
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
        browser.set_window_size(size["width"], size["height"])
    assert len(tables) > 10
    assert [t for t in tables if t[1] > t[2]] == []
