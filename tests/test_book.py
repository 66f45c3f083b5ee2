"""Smoke run of every chapter through papermill, the site build, and the published-results rules."""

import json

import papermill
import pytest

from forgetting import pipeline
from forgetting.chapters import CHAPTERS, spec
from conftest import ROOT, copy_book

pytestmark = pytest.mark.book


def test_every_chapter_runs_quick_and_never_publishes(built_book):
    root, runs = built_book
    assert [run.name for run in runs] == list(CHAPTERS)
    for run in runs:
        record = json.loads((pipeline.staging_dir(root) / f"{run.name}.json").read_text())
        assert record["parameters"] == {**spec(run.name).defaults, **spec(run.name).quick}
        assert record["published_parameters"] is run.published is (not spec(run.name).quick)
    for published in (ROOT / "data" / "results").iterdir():  # quick runs left these alone
        copy = root / "data" / "results" / published.name
        assert copy.read_bytes() == published.read_bytes(), published.name


def test_site_has_every_chapter(built_book):
    root, _ = built_book
    html = root / "_build" / "html"
    for name in CHAPTERS:
        page = (html / "_executed" / "book" / f"{name}.html").read_text()
        assert "Reproduce this chapter" in page
    intro = (html / "book" / "intro.html").read_text()
    assert "1.000" in intro and "0.911" in intro  # glued from the headline chapter


@pytest.mark.parametrize("name", list(CHAPTERS))
def test_chapters_reproduce_published_results_byte_for_byte(built_book, name):
    root, _ = built_book
    run = pipeline.run_chapter(root, name)
    assert run.published
    assert pipeline.compare(root, run) == []


def test_figures_are_byte_identical_between_runs(built_book):
    root, _ = built_book
    figures = sorted((root / "figures").glob("decay-retention-*"))
    assert {f.suffix for f in figures} == {".png", ".pdf", ".svg"}
    before = {f.name: f.read_bytes() for f in figures}
    pipeline.run_chapter(root, "decay-retention")
    assert {f.name: f.read_bytes() for f in figures} == before


def test_failed_run_leaves_published_results_untouched(tmp_path):
    root = copy_book(tmp_path)
    published = {p.name: p.read_bytes() for p in (root / "data" / "results").iterdir()}
    # plain papermill only warns about an unknown parameter; the chapter itself refuses it
    with pytest.raises(papermill.PapermillExecutionError, match="unknown parameter"):
        papermill.execute_notebook(str(root / "book" / "decay-headline.ipynb"), str(tmp_path / "out.ipynb"),
                                   parameters={"n_seed": 3}, kernel_name="python3", cwd=str(root / "book"),
                                   progress_bar=False)
    with pytest.raises(papermill.PapermillExecutionError, match="n_seeds=1"):
        papermill.execute_notebook(str(root / "book" / "decay-headline.ipynb"), str(tmp_path / "o.ipynb"),
                                   parameters={"n_seeds": 1}, kernel_name="python3",
                                   cwd=str(root / "book"), progress_bar=False)
    assert not (pipeline.staging_dir(root) / "decay-headline.json").exists()
    assert {p.name: p.read_bytes() for p in (root / "data" / "results").iterdir()} == published
    with pytest.raises(ValueError, match="published parameters"):
        pipeline.promote(root, pipeline.ChapterRun("decay-headline", 0.0, [], False))
