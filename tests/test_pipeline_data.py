"""A chapter that needs external data builds without it: it is *not rerun*, shows its published
results, says so in one line, and is never published. No test reaches the network: a download is
refused by a patched ``urlopen`` before any socket opens."""

from __future__ import annotations

import dataclasses
import json
import shutil
import urllib.request
from pathlib import Path

import nbformat
import pytest

from forgetting import pipeline
from forgetting.conversations import source
from forgetting.pipeline import cli, data
from forgetting.pipeline import run as run_module
from forgetting.pipeline.chapter import Chapter
from forgetting.pipeline.chapters import CHAPTERS, spec
from forgetting.pipeline.paths import run_results

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "data" / "results"
REASON = "no copy of the LoCoMo zip: tried X; set FORGETTING_LOCOMO to a copy or download it from URL"
NORMAL_KEYS = {"chapter", "published_parameters", "parameters", "values", "tables", "digest"}


def needs_locomo(name: str = "decay-retention") -> Chapter:
    """A published chapter, as if its spec declared the LoCoMo data (a small one, for speed)."""
    declared = dataclasses.replace(spec(name), data=("locomo",))
    return Chapter(declared, dict(declared.defaults), root=ROOT)


def offline(*args, **kwargs):
    raise OSError("network disabled by the test")


def unavailable():
    raise source.DataUnavailable(REASON)


@pytest.fixture(autouse=True)
def downloads_allowed(monkeypatch):
    """The tests decide where the zip can come from: the caller's $FORGETTING_OFFLINE is not theirs."""
    monkeypatch.delenv(source.OFFLINE_ENV, raising=False)


@pytest.fixture
def no_locomo(tmp_path, monkeypatch):
    """A checkout with no copy of the zip anywhere and no network: the real ``locomo_zip`` fails."""
    root = tmp_path / "repo"
    (root / "book").mkdir(parents=True)
    (root / "_config.yml").write_text("title: x\n")
    monkeypatch.delenv(source.LOCOMO_ENV, raising=False)
    monkeypatch.setattr(urllib.request, "urlopen", offline)
    monkeypatch.chdir(root)
    assert not (root / source.SHARED_COPY).exists()
    return root


@pytest.fixture
def shown(monkeypatch):
    """What a chapter displays on its page, as Markdown text."""
    import IPython.display

    pages: list[str] = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: pages.append(obj.data))
    return pages


# --- the registry ------------------------------------------------------------------------------


def test_every_declared_data_set_is_registered_and_no_chapter_needs_one_by_default():
    assert spec("decay-retention").data == ()
    for chapter in CHAPTERS.values():
        assert set(chapter.data) <= set(data.DATA_SETS), chapter.name
    with pytest.raises(
        ValueError, match=r"data set name='imagenet' is unknown; allowed: \['locomo', 'longmemeval'\]"
    ):
        data.locate("imagenet")


def test_locomo_comes_from_the_conversations_source(monkeypatch, tmp_path):
    zip_path = tmp_path / "locomo10.zip"
    monkeypatch.setattr(source, "locomo_zip", lambda: zip_path)
    assert data.locate("locomo") == zip_path
    assert data.unavailable() is source.DataUnavailable


# --- require_data in the kernel ------------------------------------------------------------------


def test_a_data_set_the_spec_does_not_declare_is_refused():
    chapter = Chapter(spec("decay-retention"), dict(spec("decay-retention").defaults), root=ROOT)
    with pytest.raises(ValueError, match=r"data set name='locomo' is not declared; allowed: \[\]"):
        chapter.require_data("locomo")


def test_available_data_is_a_rerun_with_the_record_of_today(monkeypatch, tmp_path, shown):
    monkeypatch.setitem(data.DATA_SETS, "locomo", lambda: tmp_path / "locomo10.zip")
    chapter = needs_locomo()
    assert chapter.require_data("locomo") == tmp_path / "locomo10.zip"
    assert chapter.not_rerun is None and shown == []
    assert set(chapter.record()) == NORMAL_KEYS


def test_without_network_or_copy_the_run_is_not_a_rerun(no_locomo, shown):
    chapter = needs_locomo()
    assert chapter.require_data("locomo") is None
    reason = chapter.not_rerun
    assert reason is not None and reason.startswith(
        "no copy of the LoCoMo zip: tried $FORGETTING_LOCOMO (unset)"
    )
    assert "network disabled by the test" in reason and source.LOCOMO_URL in reason and "\n" not in reason
    assert len(shown) == 1 and shown[0].startswith(":::{admonition} Not rerun: the data is not available")
    assert reason in shown[0] and "the page shows its published results" in shown[0]
    record = chapter.record()
    assert (
        record["rerun"] is False
        and record["reason"] == reason
        and set(record) == NORMAL_KEYS | {"rerun", "reason"}
    )


def test_off_published_parameters_the_notice_says_whose_results_it_shows(monkeypatch, shown):
    monkeypatch.setitem(data.DATA_SETS, "locomo", unavailable)
    chapter = needs_locomo()
    chapter.params = {**chapter.params, "window_size": 3}
    assert chapter.require_data("locomo") is None and chapter.not_rerun == REASON
    assert "its published results (at the published parameters)" in shown[0]


def test_a_copy_that_is_not_the_data_fails_loudly(no_locomo, shown, monkeypatch):
    wrong = no_locomo / "locomo10.zip"
    wrong.write_bytes(b"not the zip")
    monkeypatch.setenv(source.LOCOMO_ENV, str(wrong))
    chapter = needs_locomo()
    with pytest.raises(ValueError, match="SHA-256 is .* refusing it"):
        chapter.require_data("locomo")
    assert chapter.not_rerun is None and shown == [] and "rerun" not in chapter.record()


@pytest.mark.parametrize("named", ["typo.zip", "/dev/null", "."])
def test_a_named_copy_that_is_missing_or_not_a_file_fails_loudly(no_locomo, shown, monkeypatch, named):
    """``$FORGETTING_LOCOMO`` set to a typo (or a device, a folder) is an error even offline:
    only "no copy configured" is the documented skip."""
    monkeypatch.setenv(source.LOCOMO_ENV, named)
    monkeypatch.setenv(source.OFFLINE_ENV, "1")
    with pytest.raises(ValueError, match=rf"^\$FORGETTING_LOCOMO names {named}, which ") as error:
        data.locate("locomo")
    assert not isinstance(error.value, data.unavailable()) and "\n" not in str(error.value)
    chapter = needs_locomo()
    with pytest.raises(ValueError, match=r"^\$FORGETTING_LOCOMO names"):
        chapter.require_data("locomo")
    assert chapter.not_rerun is None and shown == [] and "rerun" not in chapter.record()


# --- the published results a not-rerun chapter shows ----------------------------------------------


def published_chapters() -> list[str]:
    return sorted(name for name in CHAPTERS if (PUBLISHED / f"{name}.json").is_file())


@pytest.mark.parametrize("name", published_chapters())
def test_re_gluing_and_re_tabling_the_published_results_gives_back_the_committed_record(name, tmp_path):
    """What a not-rerun chapter does, on every published chapter: the record (and each table) it
    writes is byte for byte the committed one, so published floats are rounded only once."""
    # the parameters as a kernel holds them: validated (a float list's ints become floats)
    chapter = Chapter(spec(name), spec(name).validate(dict(spec(name).defaults)), root=ROOT)
    chapter.run_dir = tmp_path
    values = chapter.published_values()
    assert values == json.loads((PUBLISHED / f"{name}.json").read_text())["values"]
    for key, value in values.items():
        assert chapter.glue(key, value) == value or value != value
    for table in json.loads((PUBLISHED / f"{name}.json").read_text())["tables"]:
        frame = chapter.published_table(table)
        chapter.table(frame, table)
        written = run_results(tmp_path) / f"{name}-{table}.csv"
        assert written.read_bytes() == (PUBLISHED / f"{name}-{table}.csv").read_bytes()
    assert chapter.save().read_bytes() == (PUBLISHED / f"{name}.json").read_bytes()


def test_text_that_pandas_would_read_as_missing_comes_back_as_written(tmp_path):
    chapter = Chapter(spec("decay-retention"), dict(spec("decay-retention").defaults), root=tmp_path)
    chapter.run_dir = tmp_path / "run"
    rows = [
        {"a": "NA", "b": None, "c": 0.1234567890123, "d": True},
        {"a": "None", "b": 2, "c": 1.0, "d": False},
    ]
    chapter.table(rows, "t")
    (tmp_path / "data" / "results").mkdir(parents=True)
    shutil.copy(run_results(chapter.run_dir) / "decay-retention-t.csv", tmp_path / "data" / "results")
    frame = chapter.published_table("t")
    assert list(frame["a"]) == ["NA", "None"] and frame["b"].isna().tolist() == [True, False]


def test_missing_published_results_are_named(tmp_path):
    chapter = Chapter(spec("decay-retention"), dict(spec("decay-retention").defaults), root=tmp_path)
    with pytest.raises(
        FileNotFoundError, match="chapter decay-retention: no published record .*decay-retention.json"
    ):
        chapter.published_values()
    published = Chapter(spec("decay-headline"), dict(spec("decay-headline").defaults), root=ROOT)
    with pytest.raises(
        FileNotFoundError, match=r"no published table name='nope' .*; published: \['summary'\]"
    ):
        published.published_table("nope")
    with pytest.raises(FileNotFoundError, match=r"no published table name='../x'"):
        published.published_table("../x")


# --- the pipeline: never published, one line, verify does not claim ----------------------------


def scratch(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(PUBLISHED, root / "data" / "results")
    (root / "book").mkdir()
    (root / "_config.yml").write_text("title: x\n")
    return root


def fake_kernel(reason):
    """A papermill stand-in that writes what a chapter kernel writes: notebook and record."""

    def execute_notebook(source_path, output_path, parameters, **kwargs):
        folder = Path(output_path).parent
        name = Path(output_path).stem
        chapter = Chapter(spec(name), dict(spec(name).defaults), root=ROOT)
        chapter.not_rerun = reason
        run_results(folder).mkdir(parents=True, exist_ok=True)
        (run_results(folder) / f"{name}.json").write_text(json.dumps(chapter.record()))
        nbformat.write(nbformat.v4.new_notebook(), output_path)

    return execute_notebook


@pytest.mark.parametrize("reason", [None, REASON])
def test_run_chapter_makes_a_not_rerun_run_unpublishable(tmp_path, monkeypatch, reason):
    import papermill

    root = scratch(tmp_path)
    monkeypatch.setattr(papermill, "execute_notebook", fake_kernel(reason))
    run = pipeline.run_chapter(root, "decay-retention")
    try:
        assert run.not_rerun == reason and run.published is (reason is None)
    finally:
        run.discard()


def not_rerun_run(tmp_path: Path, name: str = "decay-retention") -> pipeline.ChapterRun:
    folder = tmp_path / f"run-{name}"
    run_results(folder).mkdir(parents=True)
    (run_results(folder) / f"{name}.json").write_text('{"rerun": false}\n')
    nbformat.write(nbformat.v4.new_notebook(), folder / f"{name}.ipynb")
    return pipeline.ChapterRun(name, 1.0, folder, False, REASON)


def test_promotion_refuses_a_not_rerun_run_even_if_marked_published(tmp_path):
    root = scratch(tmp_path)
    before = (root / "data" / "results" / "decay-retention.json").read_bytes()
    run = not_rerun_run(tmp_path)
    run.published = True  # a caller's mistake: the reason still refuses it
    with pytest.raises(
        ValueError, match=r"chapter decay-retention was not rerun \(no copy of the LoCoMo zip"
    ):
        pipeline.publish_run(root, run, results=True, site=True)
    assert (root / "data" / "results" / "decay-retention.json").read_bytes() == before
    assert not (root / "_executed" / "site" / "decay-retention.ipynb").exists()


def test_a_build_shows_it_never_publishes_it_and_says_so_in_one_line(tmp_path, monkeypatch):
    root = scratch(tmp_path)
    before = {p.name: p.read_bytes() for p in (root / "data" / "results").iterdir()}
    monkeypatch.setattr(run_module, "run_chapter", lambda root, name, **kwargs: not_rerun_run(tmp_path, name))
    lines: list[str] = []
    runs = pipeline.run_all(root, ["decay-retention", "decay-trace"], publish=True, echo=lines.append)
    assert [run.not_rerun for run in runs] == [REASON, REASON]
    assert {p.name: p.read_bytes() for p in (root / "data" / "results").iterdir()} == before
    assert (root / "_executed" / "site" / "decay-retention.ipynb").is_file()
    assert [line for line in lines if "could not rerun" in line] == [lines[-1]]
    assert lines[-1] == (
        f"could not rerun, for want of data: decay-retention, decay-trace ({REASON}); "
        "the site shows their published results, none published"
    )
    assert "decay-trace            not rerun" in pipeline.timing_table(runs)
    assert pipeline.not_rerun_line([dataclasses.replace(runs[0], not_rerun=None)]) is None


def test_the_build_command_exits_zero(tmp_path, monkeypatch, capsys):
    root = scratch(tmp_path)
    monkeypatch.chdir(root)
    monkeypatch.setattr(run_module, "run_chapter", lambda root, name, **kwargs: not_rerun_run(tmp_path, name))
    monkeypatch.setattr(pipeline, "build_site", lambda root: root / "_build" / "html" / "index.html")
    assert cli.main(["build", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("could not rerun, for want of data: ") == 1 and REASON in out


def test_verify_does_not_claim_a_chapter_it_could_not_rerun(tmp_path, monkeypatch, capsys):
    root = scratch(tmp_path)
    monkeypatch.chdir(root)
    monkeypatch.setattr(pipeline, "run_chapter", lambda root, name, **kwargs: not_rerun_run(tmp_path, name))
    assert cli.main(["verify", "decay-retention"]) == cli.EXIT_FAILED
    out = capsys.readouterr().out
    assert f"not verified: could not rerun ({REASON})" in out and "NOT RERUN" in out
    assert "identical" not in out and not (tmp_path / "run-decay-retention").exists()


# --- one real kernel, offline ----------------------------------------------------------------------

OFFLINE_CHAPTER = """\
import dataclasses, urllib.request
from forgetting.pipeline import chapters
from forgetting.pipeline.chapter import open_chapter

chapters.CHAPTERS["decay-retention"] = dataclasses.replace(chapters.CHAPTERS["decay-retention"], data=("locomo",))
def offline(*args, **kwargs):
    raise OSError("network disabled by the test")


def unavailable():
    raise source.DataUnavailable(REASON)
urllib.request.urlopen = offline
chapter = open_chapter("decay-retention", globals())
assert chapter.require_data("locomo") is None
for key, value in chapter.published_values().items():
    chapter.glue(key, value)
chapter.save()
"""


@pytest.mark.book
def test_a_chapter_without_its_data_builds_offline_and_publishes_nothing(tmp_path, monkeypatch):
    from conftest import copy_book

    (tmp_path / "repo").mkdir()
    root = copy_book(tmp_path / "repo")
    notebook = nbformat.read(root / "book" / "decay-retention.ipynb", as_version=4)
    notebook.cells = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    notebook.cells.append(nbformat.v4.new_code_cell(OFFLINE_CHAPTER))
    nbformat.write(notebook, root / "book" / "decay-retention.ipynb")
    monkeypatch.delenv(source.LOCOMO_ENV, raising=False)
    before = {p.name: p.read_bytes() for p in (root / "data" / "results").iterdir()}
    lines: list[str] = []
    (run,) = pipeline.run_all(root, ["decay-retention"], publish=True, echo=lines.append)
    assert run.not_rerun is not None and run.not_rerun.startswith("no copy of the LoCoMo zip")
    assert "network disabled by the test" in run.not_rerun and not run.published
    assert {p.name: p.read_bytes() for p in (root / "data" / "results").iterdir()} == before
    assert lines[-1].startswith(
        "could not rerun, for want of data: decay-retention (no copy of the LoCoMo zip"
    )
    page = (root / "_executed" / "site" / "decay-retention.ipynb").read_text()
    assert "Not rerun: the data is not available" in page and "FORGETTING_LOCOMO" in page
