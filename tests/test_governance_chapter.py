"""The governance chapter at the edges of its registry: what the registry refuses before any
kernel starts, and values it allows that once crashed the chapter (they must now run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import copy_book
from forgetting.pipeline import cli
from forgetting.pipeline.chapters import spec

CHAPTER = "beyond-governance"
FORGETTING = str(Path(sys.executable).parent / "forgetting")
ONCE_CRASHED = [  # KeyError 'B' / 'A' in the traced session's decay replay
    {"task_rate": 0.0},
    {"eviction_threshold": 0.9},
]


@pytest.mark.parametrize(
    "overrides",
    [
        *ONCE_CRASHED,
        {"eviction_threshold": 0.999, "low_threshold": 0.69, "min_evidence": 1.0},
        {"session_length": 3, "shift_turn": 2, "co_retrievals": [1.0, 0.0], "crowdings": [0.0, 1000.0]},
        {"p_ok": 0.0, "p_conflict": 1.0, "p_wrong": 1.0, "p_none": 0.0, "noise_per_turn": 0},
    ],
)
def test_the_registry_allows_edge_values_the_chapter_can_run(overrides):
    assert spec(CHAPTER).validate(overrides) == overrides


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"shift_turn": 300}, "shift_turn < session_length"),
        ({"session_length": 40}, "shift_turn < session_length"),
        ({"co_retrievals": [0.0, 0.5]}, "co_retrievals includes 0 and 1"),
        ({"co_retrievals": [0.5, 1.0]}, "co_retrievals includes 0 and 1"),
        ({"crowdings": [0.01, 0.03]}, "crowdings starts at 0"),
        ({"crowdings": [0.0, 0.03, 0.01]}, "crowdings starts at 0 and strictly increases"),
        ({"crowdings": [0.0, 0.0]}, "strictly increases"),
        ({"crowdings": [0.0]}, "at least two values"),
    ],
)
def test_the_registry_refuses_what_the_chapter_cannot_run_before_any_kernel(
    in_repository, capsys, overrides, message
):
    argv = [a for k, v in overrides.items() for a in ("-y", json.dumps({k: v}))]
    assert cli.main(["run", CHAPTER, *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.book
@pytest.mark.parametrize("overrides", ONCE_CRASHED)
def test_the_chapter_runs_where_it_once_crashed(tmp_path, overrides):
    root = copy_book(tmp_path)
    argv = [a for k, v in overrides.items() for a in ("-p", k, str(v))]
    out = tmp_path / "out"
    done = subprocess.run(
        [FORGETTING, "run", CHAPTER, "--quick", *argv, "-o", str(out)],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    values = json.loads((out / "results" / f"{CHAPTER}.json").read_text())["values"]
    assert values["trace_decay_fates"].startswith("it evicts")  # the fact the replay used to look up
