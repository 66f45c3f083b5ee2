"""`forgetting run -o`: a run creates or reuses only a folder it owns, and never removes what it did
not write (forgetting.pipeline.output)."""

from __future__ import annotations

import errno
import hashlib
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
    folder = next(tmp_path / f"runs-{n}" for n in range(1000) if not (tmp_path / f"runs-{n}").exists())
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
    assert marker == {
        "chapter": "decay-trace",
        "files": {
            "decay-trace.ipynb": hashlib.sha256(b"{}").hexdigest(),
            "results/decay-trace.json": hashlib.sha256(b"new").hexdigest(),
        },
    }
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
    (target / "decay-trace.ipynb").unlink()  # a run's file the user removed: nothing of theirs
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


@pytest.mark.parametrize(
    "edit",
    ["rewritten", "same size", "symlink", "fifo"],
)
def test_a_file_of_the_run_changed_since_it_wrote_it_blocks_reuse(tmp_path, edit):
    """The probe of issue 42: output a user edited in a run folder was replaced without a word."""
    root = scratch_repo(tmp_path)
    target = tmp_path / "out"
    output.export(root, fake_run(tmp_path, text="first"), target)
    edited = target / "results" / "decay-trace.json"
    edited.unlink()
    if edit == "rewritten":
        edited.write_text("first, and my notes on it")
    elif edit == "same size":
        edited.write_text("FIRST")
    elif edit == "symlink":
        edited.symlink_to(tmp_path / "elsewhere")
    else:  # a digest must never wait on a pipe
        os.mkfifo(edited)
    before = snapshot(target)
    with pytest.raises(ValueError) as refused:
        output.check_output(root, target)
    assert str(refused.value) == (
        f"-o {target} holds 1 file(s) of its run that changed since it wrote them "
        "(e.g. 'results/decay-trace.json'): move them out, or name another folder"
    )
    with pytest.raises(ValueError, match="changed since it wrote them"):
        output.export(root, fake_run(tmp_path, text="second"), target)
    assert snapshot(target) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def test_a_run_folder_whose_marker_has_no_digests_is_refused(tmp_path):
    """A folder marked by an earlier version (file names only): its edits cannot be told apart."""
    root = scratch_repo(tmp_path)
    target = tmp_path / "out"
    output.export(root, fake_run(tmp_path, text="first"), target)
    marker = json.loads((target / output.MARKER).read_text())
    (target / output.MARKER).write_text(json.dumps({**marker, "files": sorted(marker["files"])}))
    before = snapshot(target)
    with pytest.raises(ValueError, match="records no digest of its files, so an edit to them cannot be seen"):
        output.export(root, fake_run(tmp_path, text="second"), target)
    assert snapshot(target) == before


def test_cli_refuses_a_folder_whose_run_files_were_edited_before_any_kernel(tmp_path, monkeypatch, capsys):
    root = scratch_repo(tmp_path)
    (root / "book" / "decay-retention.ipynb").write_text("{}")
    target = tmp_path / "out"
    output.export(root, fake_run(tmp_path, "decay-retention", text="first"), target)
    (target / "results" / "decay-retention.json").write_text("my edit")
    monkeypatch.chdir(root)
    monkeypatch.setattr(pipeline, "run_chapter", lambda *a, **k: pytest.fail("a kernel was started"))
    before = snapshot(tmp_path)
    assert cli.main(["run", "decay-retention", "-o", str(target)]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "changed since it wrote them" in err, err
    after = snapshot(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("repo/_executed/.publish")} == before


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


CLAIMER = """
import sys
sys.path.insert(0, {src!r})
from forgetting.pipeline import output
with output.claim_output({root!r}, {target!r}):
    print("claimed", flush=True)
    sys.stdin.read()  # held until the test closes stdin{then}
"""


def hold_claim(root: Path, target: Path, then: str = "") -> subprocess.Popen[str]:
    """Another process that claims ``target`` and holds it until its stdin is closed."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            CLAIMER.format(src=str(REPO / "src"), root=str(root), target=str(target), then=then),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    if holder.stdout.readline() != "claimed\n":
        holder.kill()
        holder.communicate(timeout=60)
        pytest.fail("the other process could not claim the folder")
    return holder


def test_a_folder_another_run_holds_is_refused_at_once(tmp_path):
    """The probe of issue 42: two runs into one folder both exited 0 and one was silently lost."""
    root = scratch_repo(tmp_path)
    target = tmp_path / "out"
    output.export(root, fake_run(tmp_path, text="first"), target)
    holder = hold_claim(root, target)
    try:
        before = snapshot(tmp_path)
        with pytest.raises(output.OutputBusy) as refused:
            output.export(root, fake_run(tmp_path, text="second"), target)
        assert str(refused.value) == (
            f"-o {target} is being written by another forgetting run (process {holder.pid}): "
            "wait for it to end, or name another folder"
        )
        assert {k: v for k, v in snapshot(tmp_path).items() if not k.startswith("runs-")} == {
            k: v for k, v in before.items() if not k.startswith("runs-")
        }
    finally:
        holder.communicate("", timeout=60)
    assert holder.returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # claim removed
    output.export(root, fake_run(tmp_path, text="third"), target)  # free again
    assert (target / "results" / "decay-trace.json").read_text() == "third"


def test_a_killed_runs_claim_does_not_block_the_next(tmp_path):
    root = scratch_repo(tmp_path)
    target = tmp_path / "new" / "out"
    holder = hold_claim(root, target, then="\n    import os; os.kill(os.getpid(), 9)")
    holder.communicate("", timeout=60)
    assert holder.returncode == -9
    assert (tmp_path / "new" / ".out.forgetting-claim").exists()  # what a SIGKILL leaves
    output.export(root, fake_run(tmp_path), target)
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["out"]


def test_cli_refuses_a_folder_another_run_holds_before_any_kernel(tmp_path, monkeypatch, capsys):
    root = scratch_repo(tmp_path)
    (root / "book" / "decay-retention.ipynb").write_text("{}")
    target = tmp_path / "out"
    monkeypatch.chdir(root)
    monkeypatch.setattr(pipeline, "run_chapter", lambda *a, **k: pytest.fail("a kernel was started"))
    holder = hold_claim(root, target)
    try:
        assert cli.main(["run", "decay-retention", "-o", str(target)]) == cli.EXIT_FAILED
    finally:
        holder.communicate("", timeout=60)
    err = capsys.readouterr().err
    assert err == (
        f"forgetting: error: -o {target} is being written by another forgetting run "
        f"(process {holder.pid}): wait for it to end, or name another folder\n"
    )
    assert not target.exists()


def test_two_runs_into_one_folder_cannot_both_succeed(tmp_path, monkeypatch, capsys):
    """The command holds its folder from before its kernel starts until its files are there: a
    second command started meanwhile is refused, and the first one's files are what is left."""
    root = scratch_repo(tmp_path)
    (root / "book" / "decay-retention.ipynb").write_text("{}")
    target = tmp_path / "out"
    monkeypatch.chdir(root)
    second: list[int] = []

    def kernel(*args, **kwargs):  # while the first command's kernel runs, a second one starts
        if not second:
            second.append(-1)
            second[0] = cli.main(["run", "decay-retention", "-o", str(target)])
            return fake_run(tmp_path, "decay-retention", text="first")
        return fake_run(tmp_path, "decay-retention", text="second")

    monkeypatch.setattr(pipeline, "run_chapter", kernel)
    assert cli.main(["run", "decay-retention", "-o", str(target)]) == 0
    assert second == [cli.EXIT_FAILED]
    assert "is being written by another forgetting run" in capsys.readouterr().err
    assert (target / "results" / "decay-retention.json").read_text() == "first"


# --- plain papermill (README's command): the chapter's whole set, or a refusal ---------------------

TINY_CHAPTER = """\
from forgetting.pipeline.chapter import open_chapter
chapter = open_chapter("decay-retention", globals())
chapter.glue("turns", max_turns)
chapter.table([{"turns": max_turns}], "t")
chapter.save()
"""


def tiny_book(tmp_path: Path) -> Path:
    """A repository whose decay-retention chapter glues one value and writes one table."""
    import nbformat

    from forgetting.pipeline.chapters import spec

    root = tmp_path / "repo"
    (root / "book").mkdir(parents=True)
    (root / "_config.yml").write_text("title: x\n")
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    defaults = spec("decay-retention").defaults
    parameters = nbformat.v4.new_code_cell("\n".join(f"{k} = {v!r}" for k, v in defaults.items()))
    parameters.metadata["tags"] = ["parameters"]
    notebook.cells = [parameters, nbformat.v4.new_code_cell(TINY_CHAPTER)]
    nbformat.write(notebook, root / "book" / "decay-retention.ipynb")
    return root


def plain_papermill(root: Path, notebook: Path, turns: int) -> subprocess.CompletedProcess[str]:
    """README's command: papermill alone, outside the pipeline."""
    env = {k: v for k, v in os.environ.items() if k != "FORGETTING_RUN_DIR"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    papermill = Path(sys.executable).parent / "papermill"
    command = [str(papermill), "book/decay-retention.ipynb", str(notebook), "-k", "python3", "--cwd", "book"]
    return subprocess.run(
        [*command, "--engine", "forgetting", "-p", "max_turns", str(turns)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow  # left out of the fast tier (make.py fast): real kernels
def test_plain_papermill_replaces_the_output_folder_with_its_whole_set(tmp_path):
    """The probe of issue 42: papermill wrote into `_build/runs/<chapter>/` in place and left a
    notebook of one run beside the record of another. Now the run's set replaces the folder's as a
    whole, at the chapter's last cell, and again on the next run."""
    root = tiny_book(tmp_path)
    folder = root / "_build" / "runs" / "decay-retention"
    earlier = fake_run(tmp_path, "decay-retention", text="a forgetting run's record")
    (earlier.folder / "figures").mkdir()
    (earlier.folder / "figures" / "decay-retention-old.png").write_text("its figure")
    output.export(root, earlier, folder)
    for turns in (100, 120):
        done = plain_papermill(root, tmp_path / f"executed-{turns}.ipynb", turns)
        assert done.returncode == 0, done.stderr[-3000:]
        assert sorted(output._files(folder)) == [
            ".forgetting-run.json",
            ".gitignore",
            "results/decay-retention-t.csv",
            "results/decay-retention.json",
        ]
        record = json.loads((folder / "results" / "decay-retention.json").read_text())
        assert record["parameters"]["max_turns"] == turns
        assert (folder / "results" / "decay-retention-t.csv").read_text() == f"turns\n{turns}\n"
        assert output.check_output(root, folder) == folder  # marked, digests and all
    assert [p.name for p in (root / "_executed" / "runs").iterdir()] == []  # no private folder left
    assert [p.name for p in folder.parent.iterdir()] == ["decay-retention"]  # nor a claim


@pytest.mark.slow  # left out of the fast tier (make.py fast): a real kernel
def test_plain_papermill_refuses_a_folder_no_run_wrote_and_writes_nothing(tmp_path):
    root = tiny_book(tmp_path)
    folder = root / "_build" / "runs" / "decay-retention"
    folder.mkdir(parents=True)
    (folder / "thesis.tex").write_text("chapter 1")
    done = plain_papermill(root, tmp_path / "executed.ipynb", 100)
    assert done.returncode != 0
    assert (
        f"ValueError: the output folder {folder} is a folder that no forgetting run wrote and is not "
        "empty (1 entries): name a new or empty folder (a chapter run by papermill or Jupyter writes "
        "there; `forgetting run decay-retention -o FOLDER` writes elsewhere)"
    ) in done.stderr, done.stderr[-3000:]
    assert snapshot(folder.parent) == {"decay-retention": "dir", "decay-retention/thesis.tex": b"chapter 1"}
    assert not (root / "_executed" / "runs").exists() or not list((root / "_executed" / "runs").iterdir())


def test_a_chapter_opened_again_in_one_kernel_takes_the_folder_over(tmp_path):
    """Jupyter: the first cell run twice opens the chapter twice; the first run is given up."""
    root = scratch_repo(tmp_path)
    first = output.RunAlone(root, "decay-retention")
    (first.folder / "results").mkdir(parents=True)
    second = output.RunAlone(root, "decay-retention")
    assert not first.folder.exists()
    (second.folder / "results").mkdir(parents=True)
    (second.folder / "results" / "decay-retention.json").write_text("second")
    target = second.finish(second.folder)
    assert target == root / "_build" / "runs" / "decay-retention"
    assert (target / "results" / "decay-retention.json").read_text() == "second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["decay-retention"]
    third = output.RunAlone(root, "decay-retention")  # free again, and held until it ends
    try:
        with pytest.raises(output.OutputBusy, match="-o .* is being written by another forgetting run"):
            output.claim_output(root, target).__enter__()
    finally:
        third.abandon()
    assert sorted(p.name for p in target.parent.iterdir()) == ["decay-retention"]
