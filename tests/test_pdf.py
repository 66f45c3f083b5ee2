"""``forgetting pdf``: the whole book printed offline by Debian's Chromium and merged with pypdf.

Slow tier: prints the session's quick build of the book (the ``built_book`` fixture). Without
Chromium or chromedriver (``apt-get install chromium chromium-driver``) the test fails in CI
(``CI`` set) and is skipped elsewhere, as tests/test_site.py does.
"""

from __future__ import annotations

import os
import re
import unicodedata

import pytest

from forgetting.pipeline import pdf, publish

pytestmark = pytest.mark.book


@pytest.fixture(scope="module")
def book_pdf(built_book):
    root, _ = built_book
    try:
        pdf.browser_binaries()
    except pdf.PdfFailed as error:
        if os.environ.get("CI"):
            pytest.fail(str(error))
        pytest.skip(str(error))
    return root, pdf.build_pdf(root)


def squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def printed_words(text: str) -> str:
    """Text extracted from a PDF page, as :func:`squeeze` reads a title: ligatures spelled out
    (NFKC) and a word the line broke at its hyphen joined again."""
    return squeeze(re.sub(r"-\s+", "-", unicodedata.normalize("NFKC", text)))


def test_pdf_holds_every_page_in_toc_order_with_an_outline(book_pdf):
    from pypdf import PdfReader

    root, path = book_pdf
    assert path == root / "_build" / "html" / "forgetting-book.pdf"
    reader = PdfReader(path)
    pages = publish.toc_pages(root)
    assert len(reader.pages) >= len(pages)
    titles = [item.title for item in reader.outline if not isinstance(item, list)]
    parts = [p.part for p in pages if p.part]
    assert squeeze(titles[0].replace("’", "'")) == squeeze(pdf.book_title(root))  # the root page's heading,
    # then one entry per part
    assert titles[1:] == list(dict.fromkeys(parts))
    chapters = [item.title for group in reader.outline if isinstance(group, list) for item in group]
    assert len(chapters) == len(pages) - 1
    # every chapter's title is text in the PDF, on the page the outline points to, and the
    # chapters' first pages come in toc order (two browsers print the pages, each its share)
    first = next(p for p in pages if p.part)
    starts = [reader.get_destination_page_number(item) for group in reader.outline if isinstance(group, list)
              for item in group]  # fmt: skip
    for title, start in zip(chapters, starts, strict=True):
        assert squeeze(title) in printed_words(reader.pages[start].extract_text()), (title, start)
    assert starts[0] > 0 and starts == sorted(starts) and len(set(starts)) == len(starts)
    assert first.file == "decay-retention"


def test_a_print_needs_at_least_one_browser(tmp_path):
    with pytest.raises(ValueError, match="browsers must be an int >= 1"):
        pdf.print_book(tmp_path, [], browsers=0)


def test_pdf_is_offline_and_dateless(book_pdf):
    from pypdf import PdfReader

    _, path = book_pdf
    reader = PdfReader(path)
    assert set(reader.metadata) == {"/Title", "/Creator"}
    assert b"CreationDate" not in path.read_bytes() and b"ModDate" not in path.read_bytes()
    uris = [
        str(a.get_object()["/A"].get("/URI", ""))
        for page in reader.pages
        for a in page.get("/Annots", [])
        if "/A" in a.get_object()
    ]
    assert not [u for u in uris if u.startswith("file:")]


def test_printing_again_gives_the_same_bytes_with_one_browser_or_two(book_pdf):
    """The reproducibility page: printing the same site again gives the same bytes. Chromium's
    own PDF of a page can differ between prints (it did on this project's machine); the merged
    file must not, whatever the number of browsers (three pages, to keep it short)."""
    root, _ = book_pdf
    pages = publish.toc_pages(root)[:3]
    title = pdf.book_title(root)
    merged = [pdf.merge(pdf.print_book(root, pages, browsers=browsers), title) for browsers in (1, 2)]
    assert merged[0] == merged[1]
