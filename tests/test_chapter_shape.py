"""The shape of a chapter page, read off the notebooks in ``book/``: the reader meets the
chapter's finding first and its machinery last.

* Right under the title, a block "What this chapter finds" (at most :data:`FINDING_WORDS` words,
  a glued value counting as one word), then the chapter's main figure.
* The parameters cell is not shown (``remove-cell``; the pipeline hides papermill's injected
  cell the same way, tests/test_book.py checks the built page).
* The "Reproduce this chapter" box (command, parameters, environment) is the page's last
  output, under the heading "Notes on this reproduction"; nothing else shows it.
"""

import json
import re

import pytest

from conftest import ROOT
from forgetting.pipeline.chapters import CHAPTERS

#: The most words of a chapter's opening block (issue 44: "about 100 words at most").
FINDING_WORDS = 110
FINDING = re.compile(
    r"\A\((?P<label>[a-z0-9-]+)\)=\n# [^\n]+\n\n"
    r":::\{admonition\} What this chapter finds\n:class: important\n\n(?P<body>.*?)\n:::\n\n"
    r"```\{glue:figure\} (?P<figure>\S+)\n",
    re.S,
)
GLUE = re.compile(r"\{glue:(?:text|md)\}`[^`]+`")


def cells(name):
    return json.loads((ROOT / "book" / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]


def source(cell):
    return "".join(cell["source"])


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def finding_words(body):
    """Words of the opening block as a reader counts them: a glued value is one word, markup none."""
    text = GLUE.sub(" value ", body)
    text = re.sub(r"\{[a-z:]+\}`([^`<]*)(<[^>]*>)?`", r"\1", text)  # {ref}`text <label>` -> text
    return sum(1 for token in text.split() if re.search(r"\w", token))


@pytest.mark.parametrize("name", CHAPTERS)
def test_the_page_opens_with_the_finding_then_the_main_figure(name):
    first = source(cells(name)[0])
    match = FINDING.match(first)
    assert match, f"{name}: cell 0 must be the title, the 'What this chapter finds' block, then a figure"
    assert match["label"] == name
    assert finding_words(match["body"]) <= FINDING_WORDS, (name, finding_words(match["body"]))
    figures = [m for c in cells(name) for m in re.findall(r"\{glue:figure\} (\S+)", source(c))]
    assert figures.count(match["figure"]) == 1, f"{name}: the main figure is shown once, at the top"


@pytest.mark.parametrize("name", CHAPTERS)
def test_the_machinery_is_out_of_the_way(name):
    book = cells(name)
    (parameters,) = [c for c in book if "parameters" in tags(c)]
    assert "remove-cell" in tags(parameters), f"{name}: the parameters cell is shown"
    boxes = [i for i, c in enumerate(book) if "reproduce_box()" in source(c)]
    assert boxes == [len(book) - 2], f"{name}: the reproduce box must be the last cell shown, alone"
    assert "remove-input" in tags(book[-2])
    assert source(book[-3]).startswith("## Notes on this reproduction\n")
    assert source(book[-1]).startswith("chapter.save()") and "remove-cell" in tags(book[-1])


def test_finding_words_counts_a_glued_value_as_one_word():
    assert finding_words("Decay keeps {glue:text}`kept:.3f` of {ref}`the facts <decay>`.") == 6
