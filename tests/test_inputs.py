"""Hostile input to ``forgetting run`` is refused in one short line naming what failed, after
bounded work and before any kernel starts: YAML bombs, devices, binary files, thousands of names,
values that look like options. The work is checked by what bounds it (the values counted, named
in the refusal, and the memory peak :data:`PEAK`), which is the same on a slow machine and a fast
one, not by a clock."""

from __future__ import annotations

import json
import os
import tempfile
import tracemalloc
from pathlib import Path

import pytest
import yaml

from forgetting.pipeline import cli, inputs
from forgetting.pipeline.chapters import LISTED_NAMES, spec

ROOT = Path(__file__).resolve().parents[1]
SHORT = 1000  # the longest line any of these inputs may produce (a chapter's allowed names included)
#: The most memory Python may hold at once while refusing an input, imports included: the refusals
#: here peak at about 15 MB, and reading a device such as /dev/zero whole would pass it. (A billion
#: laughs shares its values, so its bound is the count of values, MAX_YAML_NODES, that its
#: refusal names.)
PEAK = 64 * 2**20

LAUGHS = "".join(  # a "billion laughs" like the probe's 277-byte one: 9**8 "lol"s from 8 lines
    [f"a: &a [{','.join(['lol'] * 9)}]\n"]
    + [f"{c}: &{c} [{','.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefg", "bcdefgh")]
)


@pytest.fixture
def tmp_path():
    """A short scratch folder: a refusal quotes a path whole only up to 80 characters
    (``_validate.shown``), and pytest's own ``tmp_path`` is longer than that under
    pytest-xdist (one more folder per worker) for this module's longest test names."""
    with tempfile.TemporaryDirectory(prefix="in-") as folder:
        yield Path(folder)


@pytest.fixture
def no_kernel(in_repository):
    """Run from the repository with papermill forbidden: every refusal must come before a kernel."""


def refusal(capsys, *argv: str, chapter: str = "decay-headline", bounded: bool = False) -> str:
    """The one line ``forgetting run CHAPTER ARGV`` prints, checked to be short, for exit status 2;
    ``bounded``: its memory peak checked too (tracing every allocation slows the run, so only the
    tests of inputs that could exhaust memory ask for it)."""
    if bounded:
        tracemalloc.start()
    try:
        assert cli.main(["run", chapter, *argv]) == 2
        peak = tracemalloc.get_traced_memory()[1] if bounded else 0
    finally:
        if bounded:
            tracemalloc.stop()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err[:1000]
    assert len(err) < SHORT, (len(err), err[:1000])
    assert peak < PEAK, f"refusing took {peak / 2**20:.0f} MB"
    return err


def test_a_billion_laughs_file_is_refused_at_once(tmp_path, no_kernel, capsys):
    bomb = tmp_path / "laughs.yaml"
    bomb.write_text(LAUGHS)
    assert len(LAUGHS) < 300
    err = refusal(capsys, "-f", str(bomb), bounded=True)
    assert f"parameters file '{bomb}' is refused (line" in err and "aliases expanded" in err
    assert "aliases expanded" in refusal(capsys, "-y", LAUGHS, bounded=True)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: " + "[" * 200 + "]" * 200, f"nested more than {inputs.MAX_YAML_DEPTH} deep"),
        ("a: &a [1, *a]", "alias *'a' is inside the value it names"),
        ("a: &a {b: *a}", "alias *'a' is inside the value it names"),
        ("a: [" + ", ".join(["0"] * inputs.MAX_YAML_NODES) + "]", "aliases expanded"),
        ("a: *nowhere", "found undefined alias"),
        ("a: " + "9" * 5000, "is not valid YAML: Exceeds the limit"),
        ("a: !!python/object:os.system " + "x" * 5000, "could not determine a constructor"),
    ],
)
def test_yaml_past_the_bounds_is_refused_in_one_short_line(no_kernel, capsys, text, message):
    err = refusal(capsys, "-y", text)
    assert message in err and err.startswith("forgetting: error: -y '"), err


def test_yaml_within_the_bounds_reads_as_papermill_reads_it():
    from papermill.iorw import NoDatesSafeLoader

    text = (
        "base: &b [1, 2]\nsame: *b\nm: &m {x: 1, y: 2020-01-01}\nmerged: {<<: *m, z: .inf}\n"
        "deep: " + "[" * (inputs.MAX_YAML_DEPTH - 1) + "]" * (inputs.MAX_YAML_DEPTH - 1) + "\n"
        "many: [" + ", ".join(["0.5"] * (inputs.MAX_YAML_NODES - 200)) + "]\n"
    )
    assert inputs.yaml_mapping(text, "-y") == yaml.load(text, Loader=NoDatesSafeLoader)
    assert inputs.yaml_mapping(text, "-y")["m"]["y"] == "2020-01-01"
    assert inputs.yaml_mapping("", "-y") == {} == inputs.yaml_mapping("# nothing\n", "-y")


def test_devices_folders_and_fifos_are_not_read(tmp_path, no_kernel, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opened without waiting for a writer
    for path in ("/dev/zero", str(tmp_path), str(fifo)):
        err = refusal(capsys, "-f", path, bounded=True)
        assert f"parameters file '{path}' is not a regular file" in err


def test_a_file_over_the_cap_is_refused_without_being_read_whole(tmp_path, no_kernel, capsys):
    big = tmp_path / "big.yaml"
    big.write_bytes(b"# " + b"x" * inputs.MAX_YAML_BYTES)
    with big.open("r+b") as f:  # sparse to 2 GiB: read whole, it would pass the memory bound 32 times
        f.truncate(2**31)
    err = refusal(capsys, "-f", str(big), bounded=True)
    assert f"parameters file '{big}' is over {inputs.MAX_YAML_BYTES:,} bytes" in err
    with pytest.raises(ValueError, match="is over 10 bytes"):
        inputs.read_text_file(big, "it", limit=10)


def test_files_and_texts_together_are_capped(tmp_path, no_kernel, capsys):
    half = tmp_path / "half.yaml"
    half.write_text("#" * (inputs.MAX_YAML_BYTES // 2 + 10) + "\n")
    err = refusal(capsys, "-f", str(half), "-f", str(half))
    assert f"parameters file '{half}': the parameters files and -y texts hold over 1 MiB together" in err
    assert "holds over 1 MiB" in refusal(capsys, "-y", "a: '" + "x" * inputs.MAX_YAML_BYTES + "'")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "n_seeds: 3\nn_seeds: 4\n",
            "is refused (line 2, column 1): duplicate key 'n_seeds' (first at line 1)",
        ),
        ("a: {x: 1, y: 2, x: 3}", "is refused (line 1, column 17): duplicate key 'x' (first at line 1)"),
        ("a: [{b: [{c: 1, c: 1}]}]", "is refused (line 1, column 17): duplicate key 'c' (first at line 1)"),
        ("1: a\n1.0: b\n", "is refused (line 2, column 1): duplicate key 1.0 (first at line 1)"),  # 1 == 1.0
        ("? [1, 2]\n: a\n? [1, 2]\n: b\n", "is refused (line 3, column 3): duplicate key (1, 2)"),
    ],
)
def test_a_duplicate_key_at_any_depth_is_refused_naming_it(tmp_path, no_kernel, capsys, text, message):
    with pytest.raises(ValueError, match=r"^-y is refused \(line \d+, column \d+\): duplicate key ") as error:
        inputs.yaml_mapping(text, "-y")
    assert message in str(error.value)
    path = tmp_path / "p.yaml"
    path.write_text(text)
    assert f"parameters file '{path}' {message}" in refusal(capsys, "-f", str(path))


def test_a_merged_key_may_be_overridden_as_yaml_says():
    text = "m: &m {x: 1, y: 2}\nmerged: {<<: *m, x: 5}\n"
    assert inputs.yaml_mapping(text, "-y") == {"m": {"x": 1, "y": 2}, "merged": {"x": 5, "y": 2}}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x7fELF\x02\x01\x01\x00\x00\x00", "is binary (a NUL byte at offset 7), not YAML text"),
        (b"n_seeds: 3\nname: caf\xe9\n", "is not UTF-8 text (invalid byte at offset 20)"),
        (b"n_seeds: [1, 2\n", "is not valid YAML (line 2, column 1)"),
        (b"- 1\n", "must be a YAML mapping of parameter names to values, got list"),
    ],
)
def test_a_bad_file_is_named(tmp_path, no_kernel, capsys, data, message):
    path = tmp_path / "p.yaml"
    path.write_bytes(data)
    assert f"parameters file '{path}' {message}" in refusal(capsys, "-f", str(path))


def test_a_missing_file_is_named(no_kernel, capsys):
    err = refusal(capsys, "-f", "/nonexistent/p.yaml")
    assert "cannot read parameters file '/nonexistent/p.yaml': No such file or directory" in err


def test_thousands_of_unknown_names_make_one_short_line(no_kernel, capsys):
    argv = [word for i in range(3000) for word in ("-p", f"name_{i}", "1")]
    err = refusal(capsys, *argv)
    assert "unknown parameters 'name_0', 'name_1'" in err and f"and {3000 - LISTED_NAMES} more" in err
    names = {f"x{i}" * 50: 1 for i in range(10)}  # long names are cut too
    assert "... (" in refusal(capsys, "-y", json.dumps(names))


def test_a_long_bad_value_is_quoted_cut(no_kernel, capsys):
    assert "n_seeds='xxxxxxxx" in refusal(capsys, "-p", "n_seeds", "x" * 100_000)
    assert "characters) is not allowed" in refusal(capsys, "-y", json.dumps({"n_seeds": list(range(9000))}))
    assert "eviction_threshold=9999" in refusal(
        capsys, "-p", "eviction_threshold", "9" * 400
    )  # no OverflowError
    depths = [1] * 3000 + [101]  # breaks "every depth <= n_memories": the list is quoted cut
    err = refusal(capsys, "-y", json.dumps({"depths": depths}), chapter="mw-exp1")
    assert "every depth <= n_memories" in err and "characters)" in err


@pytest.mark.parametrize("word", ["-inf", "inf", "nan", "-nan", "-1e-3", "-3", "-0.5"])
def test_negative_and_non_finite_words_are_values_refused_by_the_registry(no_kernel, capsys, word):
    err = refusal(capsys, "-p", "eviction_threshold", word)
    assert f"parameter eviction_threshold={float(word)!r} is not allowed" in err
    err = refusal(capsys, "--parameter-raw", "window_size", word)
    assert f"parameter window_size={word!r} is not allowed" in err


def test_option_like_words_after_p_are_taken_as_papermill_takes_them():
    def parsed(*argv):
        return cli.parameters(cli._parser().parse_args(["run", "decay-headline", *argv]))

    assert parsed("-p", "a", "-x", "-r", "b", "--", "--parameter", "c", "--help") == {
        "a": "-x",
        "c": "--help",
        "b": "--",
    }
    assert parsed("--parameter-r", "d", "-inf", "-p", "-e", "-1") == {"d": "-inf", "-e": -1}
    args = cli._parser().parse_args(["--debug", "run", "decay-headline", "-p", "a", "-2", "--quick"])
    assert args.quick and args.debug and args.parameter == [["a", "-2"]]


def test_the_command_line_still_refuses_what_argparse_refused(capsys):
    with pytest.raises(SystemExit, match="2"):
        cli.main(["run", "decay-headline", "-p", "a"])
    assert "argument -p/--parameter: expected 2 arguments" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="2"):
        cli.main(["verify", "-p", "a", "-inf"])  # only run has -p: nothing is protected elsewhere
    assert "unrecognized arguments: -p" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="0"):
        cli.main(["run", "-h"])
    assert "-p NAME VALUE, --parameter NAME VALUE" in capsys.readouterr().out


def test_the_registry_quotes_any_bad_value_cut():
    chapter = spec("decay-headline")
    with pytest.raises(ValueError) as caught:
        chapter.validate({"n_seeds": "y" * 10_000, **{f"z{i}": 0 for i in range(100)}})
    message = str(caught.value)
    assert len(message) < 2 * SHORT and "and 95 more" in message and "n_seeds='yyy" in message
    with pytest.raises(ValueError, match="unknown parameter 'n_seed' for chapter 'decay-headline'"):
        chapter.param("n_seed")


def test_a_long_unknown_chapter_or_stray_words_make_a_short_usage_error(no_kernel, capsys):
    for argv in (["run", "x" * 100_000], ["pdf", *["yy"] * 10_000], ["run", "nope"]):
        with pytest.raises(SystemExit, match="2"):
            cli.main(argv)
        err = capsys.readouterr().err.splitlines()[-1]
        assert len(err) < inputs.MAX_ERROR_CHARS + 50, err[:1000]
    assert "argument chapter: unknown chapter 'nope'; chapters: ['decay-retention'" in err
    assert cli.main(["verify", "x" * 100_000]) == 2
    err = capsys.readouterr().err
    assert "unknown chapter 'xxx" in err and len(err) < SHORT


def test_one_budget_of_values_covers_every_file_and_text(tmp_path, no_kernel, capsys):
    half = json.dumps({"a": [0] * (inputs.MAX_YAML_NODES // 2)})
    (tmp_path / "half.yaml").write_text(half)
    err = refusal(capsys, "-f", str(tmp_path / "half.yaml"), "-y", half)
    assert err.startswith("forgetting: error: -y '{") and "values with the parameters before it" in err
    assert inputs.yaml_mapping(half, "-y") == json.loads(half)  # each alone is within the bounds


def test_more_build_jobs_than_cores_are_refused_before_anything_runs(tmp_path, monkeypatch, capsys):
    from forgetting import pipeline

    root = tmp_path / "repo"
    (root / "book").mkdir(parents=True)
    (root / "_config.yml").write_text("title: x\n")
    monkeypatch.chdir(root)
    monkeypatch.setattr(pipeline, "run_all", lambda *a, **k: pytest.fail("a chapter was started"))
    assert cli.main(["build", "--jobs", "100000"]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err == f"forgetting: error: jobs must be an int >= 1 and <= {os.cpu_count()}, got 100000\n"
