"""The command line's own help: ``--version``, ``params CHAPTER`` and a help text without
reStructuredText marks; chapter values shown the way the command line takes them back."""

from __future__ import annotations

import pytest

from forgetting import __version__
from forgetting.pipeline import cli, inputs
from forgetting.pipeline.chapters import CHAPTERS, spec
from forgetting.pipeline.params import command_value, parameter_table


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"forgetting {__version__}\n"


def test_help_shows_no_rst_marks(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "``" not in out and "*not rerun*" not in out
    assert "-p NAME VALUE" in out and "not rerun" in out


@pytest.mark.parametrize("name", list(CHAPTERS))
def test_params_lists_every_parameter_with_its_default_and_allowed_values(
    capsys, name, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # the registry alone: no clone needed
    assert cli.main(["params", name]) == 0
    out = capsys.readouterr().out
    chapter = spec(name)
    assert out == parameter_table(chapter) + "\n"
    lines = out.splitlines()
    assert lines[0] == f"{name}: {chapter.title}"
    for param in chapter.params:
        row = next(line for line in lines if line.split()[:1] == [param.name])
        assert command_value(param.default) in row and param.allowed in row and param.help in row
    for rule in chapter.rules:
        assert rule.text in out


def test_params_refuses_an_unknown_chapter_as_run_does(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["params", "no-such-chapter"])
    assert done.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("forgetting params: error: argument chapter: unknown chapter 'no-such-chapter'")
    assert "decay-retention" in last


@pytest.mark.parametrize(
    "value, text", [(True, "True"), (False, "False"), (0.1, "0.1"), (5, "5"), ([1, 2.5], "[1, 2.5]")]
)
def test_values_are_shown_as_the_command_line_reads_them_back(value, text):
    assert command_value(value) == text
    if not isinstance(value, list):
        assert inputs.papermill_value(text) == value  # what -p gives back


@pytest.mark.book  # runs a chapter twice
def test_an_identical_verify_leaves_a_site_that_shows_the_chapter_as_it_was(tmp_path, capsys, monkeypatch):
    """`verify` shows a chapter in the site only where the site has none: a verify that comes out
    identical must not make a built site stale (`forgetting pdf` refuses a stale one)."""
    from conftest import copy_book
    from forgetting.pipeline.paths import site_source_dir

    root = copy_book(tmp_path)
    monkeypatch.chdir(root)
    notebook = site_source_dir(root) / "decay-retention.ipynb"
    assert cli.main(["verify", "decay-retention"]) == 0
    assert notebook.is_file()  # the site had none: it shows this run
    before = notebook.read_bytes(), notebook.stat().st_mtime_ns
    assert cli.main(["verify", "decay-retention"]) == 0
    assert "identical" in capsys.readouterr().out
    assert (notebook.read_bytes(), notebook.stat().st_mtime_ns) == before


@pytest.mark.slow  # the silent server is waited for the command's whole 5 s
@pytest.mark.parametrize("reply", [None, b"HTTP/1.1 200 OK\r\n\r\n"], ids=["silent", "HTTP"])
def test_run_refuses_a_scheduler_that_does_not_answer_before_any_kernel(reply, in_repository, capsys):
    """`run --scheduler` at a port that accepts TCP but is no Dask scheduler ends in one line,
    exit 2, before any kernel starts (``in_repository`` fails the test if papermill is called);
    before, the kernel's client waited for ever, or died of a ``MemoryError``."""
    from test_executor import loopback_server

    with loopback_server(reply) as address:
        assert cli.main(["run", "decay-retention", "--scheduler", address]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"forgetting: error: scheduler {address!r} does not answer as a Dask scheduler")
