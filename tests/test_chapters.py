"""Chapter parameters: the notebooks, the registry and the command line agree and refuse bad input."""

import ast
import json
import os
from pathlib import Path

import pytest
import yaml

from forgetting.pipeline.chapter import Chapter
from forgetting.pipeline.chapters import CHAPTERS, Param, spec
from forgetting.studies import agent

ROOT = Path(__file__).resolve().parents[1]


def parameters_cell(name):
    notebook = json.loads((ROOT / "book" / f"{name}.ipynb").read_text())
    cells = [c for c in notebook["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, f"{name}: expected one cell tagged parameters"
    values = {}
    for node in ast.parse("".join(cells[0]["source"])).body:
        assert isinstance(node, ast.Assign), f"{name}: parameters cell holds only assignments"
        values[node.targets[0].id] = ast.literal_eval(node.value)
    return values, notebook


@pytest.mark.parametrize("name", list(CHAPTERS))
def test_notebook_parameters_equal_published_defaults(name):
    values, notebook = parameters_cell(name)
    assert values == spec(name).defaults
    assert all(not c.get("outputs") for c in notebook["cells"] if c["cell_type"] == "code")
    assert spec(name).validate(spec(name).quick) == spec(name).quick  # quick values are valid


def test_every_notebook_is_registered_and_in_the_table_of_contents():
    assert sorted(p.stem for p in (ROOT / "book").glob("*.ipynb")) == sorted(CHAPTERS)
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    entries = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    pages = sorted(p.stem for p in (ROOT / "book").glob("*.md"))
    assert [e for e in entries if e in CHAPTERS] == list(CHAPTERS)  # the book's order is the pipeline's
    assert sorted([toc["root"]] + [e for e in entries if e not in CHAPTERS]) == pages  # every page, once


@pytest.mark.parametrize(
    "param, value",
    [
        (Param("n", 5, "int", 1, 10), 0),
        (Param("n", 5, "int", 1, 10), 2.0),
        (Param("n", 5, "int", 1, 10), True),
        (Param("x", 0.2, "float", 0.0, 1.0), float("nan")),
        (Param("x", 0.2, "float", 0.0, 1.0), "0.2"),
        (Param("b", False, "bool"), 1),
        (Param("l", [1], "int-list", 0), []),
        (Param("l", [1], "int-list", 0), [1, -1]),
    ],
)
def test_bad_parameter_values_are_named(param, value):
    with pytest.raises(ValueError, match=rf"parameter {param.name}=.* expected"):
        param.validate(value)


def test_a_file_parameter_is_its_default_word_or_a_regular_file_read_from_here(tmp_path, monkeypatch):
    """One kind for every file a reader supplies (real-conversations' ``data``, use-agent's
    ``conversation``): the default word as it is, else a path read from the current folder,
    handed on absolute, refused before any kernel unless it is a regular file with an allowed
    ending that ``check`` accepts."""

    def check(path):
        if path.read_text() != "[]":
            raise ValueError(f"{path}: not []")

    param = Param("conversation", "example", "file", suffixes=(".json", ".zip"), check=check)
    (tmp_path / "c.json").write_text("[]")
    (tmp_path / "bad.json").write_text("{}")
    (tmp_path / "folder.json").mkdir()
    os.mkfifo(tmp_path / "fifo.json")
    monkeypatch.chdir(tmp_path)
    assert param.validate("example") == "example"
    assert param.validate("c.json") == str(tmp_path / "c.json")
    assert param.validate(str(tmp_path / "c.json")) == str(tmp_path / "c.json")
    allowed = "example or the path of a .json or .zip file"
    for value, detail in [
        ("nope.json", f": no file {tmp_path / 'nope.json'}"),
        ("folder.json", f": {tmp_path / 'folder.json'} is a folder, not a regular file"),
        ("fifo.json", f": {tmp_path / 'fifo.json'} is a FIFO, not a regular file"),
        ("c.yaml", f": expected {allowed}; its name does not end in .json or .zip"),
        ("bad.json", f": {tmp_path / 'bad.json'}: not []"),
        (
            3,
            f": expected {allowed} (a path that -p reads as a number or True goes with -r conversation PATH)",
        ),
        ("", f": expected {allowed}"),
    ]:
        with pytest.raises(ValueError) as caught:
            param.validate(value)
        assert str(caught.value) == f"parameter conversation={value!r} is not allowed{detail}"


def test_a_run_with_another_conversation_file_is_not_at_published_parameters():
    """Only the default word is the published parameters: any path, even the example's own
    file, makes a run that writes only to its own folder."""
    chapter = spec("use-agent")
    assert Chapter(chapter, chapter.validate(chapter.defaults), root=ROOT).published
    params = {**chapter.defaults, **chapter.validate({"conversation": str(ROOT / agent.EXAMPLE_FILE)})}
    assert not Chapter(chapter, params, root=ROOT).published


def test_unknown_chapter_is_refused():
    with pytest.raises(ValueError, match="unknown chapter 'nope'"):
        spec("nope")


# The chapters that build a decay SessionConfig, and the num_foundational each uses when it is
# not one of its parameters (decay-trace traces one fact).
SESSION_CHAPTERS = {
    "decay-headline": None,
    "decay-sweeps": None,
    "decay-trace": 1,
    "decay-postmortems": None,
    "decay-curves": None,
}


def test_the_session_chapters_are_the_chapters_with_a_session_length_and_noise():
    with_sessions = [
        n for n, c in CHAPTERS.items() if {"session_length", "noise_per_turn"} <= set(c.defaults)
    ]
    assert sorted(SESSION_CHAPTERS) == sorted(set(with_sessions) - {"beyond-governance"})  # its own world


def _session_refused(config):
    """Whether SessionConfig refuses ``config`` for its size (False: it accepts it)."""
    from forgetting.studies.decay.sessions import SessionConfig

    try:
        SessionConfig(seed=0, **config)
    except ValueError as error:
        return "events" in str(error)
    return False


@pytest.mark.parametrize("name", list(SESSION_CHAPTERS))
@pytest.mark.parametrize("noise, refused", [(99, False), (100, True), (1000, True)])
def test_a_session_beyond_the_session_bound_is_refused_by_the_registry(name, noise, refused):
    """100,000 turns with 100 noise items a turn, and the facts' events, is just over the
    10**7 events SessionConfig allows: the registry refuses it before any kernel, naming the bound."""
    from forgetting.studies.decay.sessions import MAX_SESSION_SIZE

    chapter = spec(name)
    values = {"session_length": 100_000, "noise_per_turn": noise}
    if "checkpoint_turn" in chapter.defaults:
        values["checkpoint_turn"] = 30
    full = {**chapter.defaults, **values}
    config = {k: full[k] for k in ("session_length", "noise_per_turn", "recalls_per_foundational")}
    config["num_foundational"] = SESSION_CHAPTERS[name] or full["num_foundational"]
    assert _session_refused(config) is refused  # the registry and the library agree
    if not refused:
        assert chapter.validate(values) == values
        return
    with pytest.raises(ValueError, match=rf"^chapter {name}: parameters session_length=100000, .*") as info:
        chapter.validate(values)
    assert f"<= {MAX_SESSION_SIZE} (MAX_SESSION_SIZE" in str(info.value)


@pytest.mark.parametrize("name", [n for n in SESSION_CHAPTERS if "noise_levels" in spec(n).defaults])
def test_every_noise_level_of_a_sweep_is_held_to_the_session_bound(name):
    chapter = spec(name)
    assert chapter.validate({"session_length": 100_000, "noise_levels": [1, 99]})
    with pytest.raises(ValueError, match=rf"^chapter {name}: parameters .*noise_levels=\[1, 100\]"):
        chapter.validate({"session_length": 100_000, "noise_levels": [1, 100]})


def test_forgetting_run_refuses_a_session_beyond_the_bound_before_any_kernel(in_repository, capsys):
    from forgetting.pipeline import cli

    argv = ["run", "decay-headline", "-p", "session_length", "100000", "-p", "noise_per_turn", "1000"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "MAX_SESSION_SIZE" in err and "10000000" in err and err.count("\n") == 1 and "Traceback" not in err
