"""`forgetting run -o`: a run creates or reuses only a folder it owns, and never removes what it did
not write (forgetting.pipeline.output)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from forgetting import pipeline
from forgetting.pipeline import cli, output
from forgetting.pipeline.paths import run_results

REPO = Path(__file__).resolve().parents[1]


def scratch_repo(tmp_path: Path) -> Path:
    """A repository layout with a file in each protected folder."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "_config.yml").write_text("title: x\n")
    for name in output.PROTECTED:
        (root / name).mkdir()
        (root / name / "keep.txt").write_text(name)
    (root / "data" / "results").mkdir()
    (root / "data" / "results" / "decay-trace.json").write_text("published")
    (root / "notes.txt").write_text("my notes")
    return root


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder`` (symlinks by target, not followed) with its content."""
    found: dict[str, bytes | str] = {}
    for top, folders, names in os.walk(folder):
        for name in folders + names:
            path = Path(top) / name
            key = path.relative_to(folder).as_posix()
            if path.is_symlink():
                found[key] = "-> " + os.readlink(path)
            elif path.is_file():
                found[key] = path.read_bytes()
            else:
                found[key] = "dir"
    return found


def fake_run(tmp_path: Path, name: str = "decay-trace", text: str = "new") -> pipeline.ChapterRun:
    folder = tmp_path / f"runs-{len(list(tmp_path.iterdir()))}"
    run_results(folder).mkdir(parents=True)
    (run_results(folder) / f"{name}.json").write_text(text)
    (folder / f"{name}.ipynb").write_text("{}")
    return pipeline.ChapterRun(name, 0.0, folder, False)


REFUSED = {
    "the repository": (lambda root: root, "the repository or a folder above it"),
    "the folder above it": (lambda root: root.parent, "the repository or a folder above it"),
    "the file system root": (lambda root: Path("/"), "the repository or a folder above it"),
    "data/results": (lambda root: root / "data" / "results", "inside the repository's data/"),
    "a new folder in data/": (lambda root: root / "data" / "new", "inside the repository's data/"),
    "book": (lambda root: root / "book", "inside the repository's book/"),
    "figures": (lambda root: root / "figures", "inside the repository's figures/"),
    "src": (lambda root: root / "src" / "x", "inside the repository's src/"),
    "tests": (lambda root: root / "tests", "inside the repository's tests/"),
    ".git": (lambda root: root / ".git", "inside the repository's .git/"),
    "the runs in progress": (lambda root: root / "_executed" / "runs", "inside the repository's _executed/"),
    "an existing file": (lambda root: root / "notes.txt", "is an existing file"),
    "a folder under a file": (lambda root: root / "notes.txt" / "sub", "which is a file"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_folder_a_run_does_not_own_is_refused_and_nothing_changes(tmp_path, case):
    root = scratch_repo(tmp_path)
    where, message = REFUSED[case]
    before = snapshot(tmp_path)
    with pytest.raises(ValueError, match=message):
        output.check_output(root, where(root))
    run = fake_run(tmp_path)
    before_export = snapshot(tmp_path)
    with pytest.raises(ValueError, match=message):
        output.export(root, run, where(root))
    assert snapshot(tmp_path) == before_export
    assert {k: v for k, v in snapshot(tmp_path).items() if not k.startswith("runs-")} == before


def test_every_tracked_top_level_folder_is_protected():
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    folders = {line.split("/", 1)[0] for line in tracked if "/" in line}
    assert folders <= set(output.PROTECTED), sorted(folders - set(output.PROTECTED))


def test_a_symlink_is_refused_and_its_target_kept(tmp_path):
    root = scratch_repo(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "precious.txt").write_text("mine")
    link = root / "link"
    link.symlink_to(outside)
    with pytest.raises(ValueError, match="is a symlink"):
        output.export(root, fake_run(tmp_path), link)
    assert snapshot(outside) == {"precious.txt": b"mine"} and link.is_symlink()


def test_a_non_empty_folder_no_run_wrote_is_refused(tmp_path):
    root = scratch_repo(tmp_path)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("chapter 1")
    with pytest.raises(ValueError, match="no forgetting run wrote and is not empty"):
        output.export(root, fake_run(tmp_path), mine)
    assert snapshot(mine) == {"thesis.tex": b"chapter 1"}


def test_a_new_folder_is_created_with_its_parents_and_marked(tmp_path):
    root = scratch_repo(tmp_path)
    target = tmp_path / "a" / "b" / "out"
    assert output.export(root, fake_run(tmp_path), target) == target
    marker = json.loads((target / output.MARKER).read_text())
    assert marker == {"chapter": "decay-trace", "files": ["decay-trace.ipynb", "results/decay-trace.json"]}
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_an_empty_folder_is_used(tmp_path):
    root = scratch_repo(tmp_path)
    target = tmp_path / "empty"
    target.mkdir()
    output.export(root, fake_run(tmp_path), target)
    assert (target / "results" / "decay-trace.json").read_text() == "new"


def test_a_folder_an_earlier_run_wrote_is_replaced_as_a_whole(tmp_path):
    root = scratch_repo(tmp_path)
    target = tmp_path / "out"
    output.export(root, fake_run(tmp_path, text="first"), target)
    (target / "results" / "decay-trace.json").write_text("edited by hand")  # a run's file: replaced
    output.export(root, fake_run(tmp_path, "decay-headline", text="second"), target)
    assert sorted(snapshot(target)) == [
        output.MARKER,
        "decay-headline.ipynb",
        "results",
        "results/decay-headline.json",
    ]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def test_a_file_the_run_did_not_write_blocks_reuse(tmp_path):
    root = scratch_repo(tmp_path)
    target = tmp_path / "out"
    output.export(root, fake_run(tmp_path), target)
    (target / "results" / "my-analysis.py").write_text("print(1)")
    before = snapshot(target)
    with pytest.raises(ValueError, match=r"holds 1 file\(s\) its run did not write"):
        output.export(root, fake_run(tmp_path), target)
    assert snapshot(target) == before


def test_a_full_disk_leaves_the_folder_as_it_was_and_no_temp(tmp_path, monkeypatch):
    root = scratch_repo(tmp_path)
    target = tmp_path / "out"
    output.export(root, fake_run(tmp_path, text="first"), target)
    before = snapshot(tmp_path / "out")
    real_rename = os.rename

    def other_filesystem(source, destination):
        if str(destination).endswith(".incoming"):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real_rename(source, destination)

    def full(source, destination):
        raise OSError(errno.ENOSPC, "No space left on device", str(destination))

    monkeypatch.setattr(output.os, "rename", other_filesystem)
    monkeypatch.setattr(output.shutil, "copyfile", full)
    with pytest.raises(
        output.OutputFailed, match="the disk is full; that folder was left as it was"
    ) as failed:
        output.export(root, fake_run(tmp_path), target)
    assert len(str(failed.value)) < 300
    assert snapshot(tmp_path / "out") == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def test_leftovers_of_an_interrupted_export_are_removed_by_the_next(tmp_path):
    root = scratch_repo(tmp_path)
    for suffix in ("0123456789ab.incoming", "ba9876543210.old"):
        (tmp_path / f".out.{suffix}" / "results").mkdir(parents=True)
    (tmp_path / ".other.0123456789ab.old").mkdir()  # another target's: kept
    output.export(root, fake_run(tmp_path), tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [".other.0123456789ab.old"]


def test_cli_refuses_before_any_kernel_in_one_line(tmp_path, monkeypatch, capsys):
    root = scratch_repo(tmp_path)
    (root / "book" / "decay-retention.ipynb").write_text("{}")
    monkeypatch.chdir(root)
    started = []
    monkeypatch.setattr(pipeline, "run_chapter", lambda *a, **k: started.append(a))
    before = snapshot(tmp_path)
    for target in ("", ".", "data/results", "book", "figures", "notes.txt", ".."):
        assert cli.main(["run", "decay-retention", "-o", target]) == cli.EXIT_USAGE, target
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("forgetting: error: -o "), err
    assert started == []
    after = snapshot(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("repo/_executed/.publish")} == before


def test_cli_removes_the_run_folder_when_the_output_fails(tmp_path, monkeypatch, capsys):
    root = scratch_repo(tmp_path)
    (root / "book" / "decay-retention.ipynb").write_text("{}")
    monkeypatch.chdir(root)
    run = fake_run(tmp_path, "decay-retention")

    def vanished(root_, chapter, output_):  # the folder became someone else's during the run
        raise output.OutputFailed(
            "cannot write the run to x: the disk is full; that folder was left as it was"
        )

    monkeypatch.setattr(pipeline, "run_chapter", lambda *a, **k: run)
    monkeypatch.setattr(pipeline, "export", vanished)
    assert cli.main(["run", "decay-retention", "-o", str(tmp_path / "out")]) == cli.EXIT_FAILED
    assert not run.folder.exists()
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.slow  # left out of the fast tier (make.py fast)
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git for a scratch clone")
def test_run_o_dot_in_a_scratch_clone_keeps_the_clone(tmp_path):
    """The probe's first case end to end: the real command in a real clone, `.git` included."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{REPO}", str(clone)], check=True)
    before = snapshot(clone)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    for target in (".", "", "data/results", "book", "figures", "README.md", "..", ".git"):
        done = subprocess.run(
            [sys.executable, "-m", "forgetting.pipeline.launch", "run", "decay-retention", "-o", target],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, (target, done.stderr)
        assert done.stderr.count("\n") == 1 and "-o" in done.stderr, done.stderr
    after = snapshot(clone)
    assert {k: v for k, v in after.items() if not k.startswith("_executed")} == before


def test_a_mount_point_is_refused(tmp_path):
    root = scratch_repo(tmp_path)
    mounted = tmp_path / "mnt"
    mounted.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "forgetting-test", str(mounted)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root or no CAP_SYS_ADMIN)")
    try:
        with pytest.raises(ValueError, match="is a mount point"):
            output.export(root, fake_run(tmp_path), mounted)
        assert list(mounted.iterdir()) == []
    finally:
        subprocess.run(["umount", "-l", str(mounted)], check=False)


def test_a_run_inside_the_clone_is_ignored_by_git_and_one_outside_is_not_touched(tmp_path):
    root = scratch_repo(tmp_path)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    inside = output.export(root, fake_run(tmp_path), root / "my-run")
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=root, capture_output=True, text=True
    )
    assert "my-run" not in status.stdout
    assert ".gitignore" in json.loads((inside / output.MARKER).read_text())["files"]
    outside = output.export(root, fake_run(tmp_path), tmp_path / "elsewhere")
    assert not (outside / ".gitignore").exists()


@pytest.mark.slow  # left out of the fast tier (make.py fast)
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git for a scratch clone")
def test_the_documented_o_examples_leave_the_clone_clean_and_the_style_checks_green(tmp_path):
    """README's `-o my-run` and the reproducibility page's `-o my-runs/headline` write inside the
    clone: git, and ruff (which follows .gitignore), must not see what they wrote."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{REPO}", str(clone)], check=True)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    for target in ("my-run", "my-runs/headline"):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "forgetting.pipeline.launch",
                "run",
                "decay-retention",
                "--quick",
                "-o",
                target,
            ],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        assert (clone / target / "decay-retention.ipynb").is_file()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True)
    assert [line for line in status.stdout.splitlines() if "_executed" not in line] == []
    ruff = Path(sys.executable).parent / "ruff"
    for args in (("check", "--no-cache"), ("format", "--check", "--no-cache")):
        linted = subprocess.run([str(ruff), *args], cwd=clone, capture_output=True, text=True)
        assert linted.returncode == 0, linted.stdout + linted.stderr
