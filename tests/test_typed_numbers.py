"""No page types a number that the execution glues: prose numbers come from the run.

A number in a chapter's prose (markdown cells) that equals one of that chapter's recorded values
or parameters, or a number in a page of ``book/`` that equals a value or parameter of any chapter,
should be a ``{glue:text}`` role: typed, it goes stale the day the parameter changes. Numbers
inside glue roles, math, code, references, citations and directives are not prose and are
skipped, and so is the intro's comparison table, generated from ``data/published.yaml``; so are
integers below 10 (counting words: "two counters", "Experiment 4") and years.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from forgetting.pipeline.chapters import CHAPTERS
from forgetting.studies import published

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "data" / "results"

NOT_PROSE = re.compile(
    r"\$\$.*?\$\$|\$[^$\n]*\$"  # math
    r"|\{[a-z:]+\}`[^`]*`"  # roles: glue, ref, numref, cite, download, doc
    r"|`[^`\n]*`"  # inline code
    r"|\]\([^)]*\)"  # link targets
    r"|<!--.*?-->"  # comments (the generated intro table's markers)
    r"|^\([^\n]*\)=$"  # labels
    r"|^:[a-z-]+:[^\n]*$",  # directive options
    flags=re.S | re.M,
)
NUMBER = re.compile(r"(?<![\w.−-])(\d{1,3}(?:[ \u202f\u2009]\d{3})+(?!\d)|\d+(?:\.\d+)?)(?![\w.]\d)")


def without_code(text: str) -> str:
    """``text`` without fenced code blocks; a directive (```` ```{name} ````) keeps its body, the
    caption of a figure for instance, and loses only its fences."""
    kept, fence = [], None
    for line in text.splitlines():
        if fence is None and line.startswith("```"):
            fence = "directive" if line[3:].startswith("{") else "code"
        elif fence is not None and line.strip() == "```":
            fence = None
        elif fence != "code":
            kept.append(line)
    return "\n".join(kept)


def prose_numbers(text: str) -> list[str]:
    """Numbers in the prose of ``text``: not in code, math, roles, links or directive options."""
    prose = NOT_PROSE.sub(" ", without_code(text))
    found = []
    for number in (re.sub(r"[ \u202f\u2009]", "", n) for n in NUMBER.findall(prose)):
        if "." not in number and (int(number) < 10 or 1800 <= int(number) <= 2100):
            continue
        found.append(number)
    return found


def _numbers(record: dict) -> set[float]:
    values = [*record["values"].values(), *record["parameters"].values()]
    flat = [v for value in values for v in (value if isinstance(value, list) else [value])]
    return {float(v) for v in flat if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _glued(chapter: str) -> set[float]:
    return _numbers(json.loads((RESULTS / f"{chapter}.json").read_text(encoding="utf-8")))


def _typed_where_glued(text: str, glued: set[float]) -> list[str]:
    typed = []
    for number in prose_numbers(text):
        digits = len(number.split(".")[1]) if "." in number else 0
        if any(round(value, digits) == float(number) for value in glued):
            typed.append(number)
    return typed


def test_the_scan_sees_prose_numbers_only() -> None:
    text = "a 150-turn session, {glue:text}`n:d` seeds, $k = 12$, `-p n 40`, 0.518 [x](a/77.md) 4 1885"
    assert prose_numbers(text) == ["150", "0.518"]
    caption = "```{glue:figure} fits\n:name: fig-fits\n\nAt 0.25, W = 15.\n```\n```bash\nrun -p n 30\n```"
    assert prose_numbers(caption) == ["0.25", "15"]
    assert prose_numbers("at 10 000 episodes, 2 500 seeds") == ["10000", "2500"]
    assert _typed_where_glued(text, {150.0, 0.5183}) == ["150", "0.518"]
    assert _typed_where_glued(text, {151.0}) == []


@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_no_chapter_types_a_number_it_glues(chapter: str) -> None:
    glued = _glued(chapter)
    notebook = json.loads((ROOT / "book" / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    typed = {
        (index, number)
        for index, cell in enumerate(notebook["cells"])
        if cell["cell_type"] == "markdown"
        for number in _typed_where_glued("".join(cell["source"]), glued)
    }
    assert not typed, f"{chapter}: typed numbers (cell, number) that the chapter glues: {sorted(typed)}"


@pytest.mark.parametrize("page", sorted(p.name for p in (ROOT / "book").glob("*.md")))
def test_no_page_types_a_number_a_chapter_glues(page: str) -> None:
    glued = set().union(*(_glued(chapter) for chapter in CHAPTERS))
    text = (ROOT / "book" / page).read_text(encoding="utf-8")
    if published.INTRO_BEGIN in text:  # generated from data/published.yaml (tests/test_published.py)
        text = text[: text.index(published.INTRO_BEGIN)] + text[text.index(published.INTRO_END) :]
    typed = _typed_where_glued(text, glued)
    assert not typed, f"{page}: typed numbers that a chapter glues: {typed}"


CROSS_GLUE = re.compile(r"\{glue:[a-z]+\}`/([a-z0-9-]+)\.ipynb::([^`]*)`")


@pytest.mark.parametrize("page", sorted(p.name for p in (ROOT / "book").glob("*.md")))
def test_a_page_glues_from_a_chapter_only_keys_it_publishes_and_with_a_format(page: str) -> None:
    """``{glue:text}`/chapter.ipynb::key:format``` on a page: the chapter publishes ``key``, and
    the format is there, because myst-nb reads the last ``:`` of ``/chapter.ipynb::key`` as the
    start of a format and then finds no key ``/chapter.ipynb:`` (the build fails with -W)."""
    text = (ROOT / "book" / page).read_text(encoding="utf-8")
    problems = []
    for chapter, rest in CROSS_GLUE.findall(text):
        key, _, fmt = rest.partition(":")
        published = json.loads((RESULTS / f"{chapter}.json").read_text(encoding="utf-8"))["values"]
        if not fmt:
            problems.append(f"{chapter}::{key} has no format")
        if key not in published:
            problems.append(f"{chapter}::{key} is not a value {chapter} publishes")
    assert problems == []
