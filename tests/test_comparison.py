"""verify names the value that moved, not the digest, with its relative difference, and says when
the difference is only float noise at a rounding boundary (forgetting.pipeline.comparison)."""

from __future__ import annotations

import json

from forgetting.pipeline.comparison import first_difference
from forgetting.pipeline.values import PUBLISHED_DIGITS


def record(**values):
    body = {"chapter": "mw-exp3", "values": values}
    return json.dumps({**body, "digest": json.dumps(values, sort_keys=True)}, sort_keys=True).encode()


def test_the_moved_value_is_named_before_the_digest():
    found = first_difference(
        "mw-exp3.json", record(bound=1.980900690, rho=0.3), record(bound=1.980900689, rho=0.3)
    )
    assert found.startswith("values.bound: 1.98090069 (published 1.980900689); relative difference 5.0e-10")
    assert f"one unit of the last of the {PUBLISHED_DIGITS} published digits" in found
    assert "not a changed result" in found


def test_a_value_published_at_full_precision_is_not_called_noise():
    found = first_difference("x.json", record(r=0.1533549668), record(r=0.15335496684492847))
    assert found == "values.r: 0.1533549668 (published 0.15335496684492847); relative difference 2.9e-10"


def test_two_units_of_the_last_digit_are_a_change():
    found = first_difference("x.json", record(r=1.980900691), record(r=1.980900689))
    assert found.endswith("relative difference 1.0e-09")


def test_a_csv_cell_gets_its_relative_difference():
    found = first_difference("x.csv", b"a,b\n1,0.9107284768\n", b"a,b\n1,0.910728\n")
    assert found == "row 1, column b: 0.9107284768 (published 0.910728); relative difference 5.2e-07"


def test_a_real_change_gives_its_relative_difference_and_no_excuse():
    found = first_difference("mw-exp3.json", record(rho=0.31), record(rho=0.3))
    assert found == "values.rho: 0.31 (published 0.3); relative difference 3.3e-02"


def test_the_digest_is_named_when_it_alone_differs():
    new = json.loads(record(rho=0.3))
    new["digest"] = "other"
    found = first_difference("mw-exp3.json", json.dumps(new).encode(), record(rho=0.3))
    assert found.startswith("digest: ")


def test_text_and_zero_values_get_no_relative_difference():
    assert first_difference("x.json", record(s="a"), record(s="b")) == 'values.s: "a" (published "b")'
    assert first_difference("x.json", record(v=1), record(v=0)) == "values.v: 1 (published 0)"


def _committed_repo(tmp_path):
    import subprocess

    root = tmp_path / "repo"
    (root / "data" / "results").mkdir(parents=True)
    (root / "book").mkdir()
    (root / "_config.yml").write_text("title: x\n")
    (root / "data" / "results" / "decay-trace.json").write_text("{}\n")
    run = {"cwd": root, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q"], **run)
    subprocess.run(["git", "add", "-A"], **run)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], **run)
    return root


def test_committed_differences_lists_what_a_build_rewrote(tmp_path):
    from forgetting.pipeline.comparison import committed_differences

    root = _committed_repo(tmp_path)
    assert committed_differences(root) == []
    (root / "data" / "results" / "decay-trace.json").write_text('{"v": 1}\n')
    (root / "data" / "results" / "decay-trace-new.csv").write_text("a\n")
    assert committed_differences(root) == [
        "M data/results/decay-trace.json",
        "?? data/results/decay-trace-new.csv",
    ]
    assert committed_differences(tmp_path / "elsewhere") is None


def test_a_build_that_rewrites_committed_results_fails_in_ci(tmp_path, monkeypatch, capsys):
    from forgetting import pipeline
    from forgetting.pipeline import cli

    root = _committed_repo(tmp_path)
    monkeypatch.chdir(root)
    monkeypatch.setattr(pipeline, "run_all", lambda *a, **k: [])
    monkeypatch.setattr(pipeline, "build_site", lambda root: root / "index.html")
    monkeypatch.setenv("CI", "true")
    assert cli.main(["build"]) == 0
    assert "identical to the committed ones" in capsys.readouterr().out
    (root / "data" / "results" / "decay-trace.json").write_text('{"v": 1}\n')
    assert cli.main(["build"]) == cli.EXIT_FAILED
    captured = capsys.readouterr()
    assert "M data/results/decay-trace.json" in captured.out
    assert captured.err.startswith("forgetting: error: 1 published file(s) differ from the committed ones")
    monkeypatch.delenv("CI")
    assert cli.main(["build"]) == 0  # by hand: listed, not failed


def test_table_digests_are_named_after_the_values():
    new = json.loads(record(rho=0.31))
    old = json.loads(record(rho=0.3))
    new["tables"], old["tables"] = {"t": "aa"}, {"t": "bb"}
    found = first_difference("x.json", json.dumps(new).encode(), json.dumps(old).encode())
    assert found.startswith("values.rho: 0.31")
