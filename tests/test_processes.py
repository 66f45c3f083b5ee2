"""A killed, terminated or interrupted command leaves nothing running and says so in one line; a
closed stdout is not a crash (forgetting.pipeline.processes, forgetting.pipeline.launch)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import copy_book

pytestmark = [
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)"),
    pytest.mark.slow,  # left out of the fast tier (make.py fast)
]

SRC = Path(__file__).resolve().parents[1] / "src"
COMMAND = [sys.executable, "-m", "forgetting.pipeline.launch"]


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state letter) of a process, None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return int(fields[1]), fields[0]


def descendants(pid: int) -> dict[int, str]:
    """Every live process below ``pid``, with its command line."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (found := _stat(int(entry))) is not None:
            parents.setdefault(found[0], []).append(int(entry))
    found, todo = {}, [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            try:
                found[child] = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            todo.append(child)
    return found


def alive(pids) -> list[int]:
    """The processes of ``pids`` still running (a zombie has ended; it waits only to be reaped)."""
    return [pid for pid in pids if (found := _stat(pid)) is not None and found[1] != "Z"]


def wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.1)
    pytest.fail(f"waited {seconds} s for {what}")


def start(root: Path, *args: str, **kwargs) -> subprocess.Popen[str]:
    """The command in ``root``, its output discarded unless ``kwargs`` say otherwise."""
    env = kwargs.pop("env", {**os.environ, "PYTHONPATH": str(SRC)})
    streams = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, **kwargs}
    return subprocess.Popen([*COMMAND, *args], cwd=root, env=env, text=True, **streams)


@pytest.mark.parametrize(
    ("args", "marker", "settle"),
    [
        (("build", "--quick", "--jobs", "2"), "ipykernel_launcher", 0.0),
        (("run", "decay-headline", "-p", "n_seeds", "100000", "--workers", "2"), "popen_loky_posix", 4.0),
    ],
    ids=["parallel build", "run with local workers"],
)
def test_a_sigkill_leaves_no_process_and_the_next_command_no_run_folder(tmp_path, args, marker, settle):
    """The moment two kernels (or two local workers) exist, SIGKILL the command: one second
    later none of its processes runs. Kernels are bound to their parent before they start;
    a local worker binds itself first thing when it has started (``settle`` lets them
    finish starting: one killed during its start-up exits when it gets there, checked below)."""
    root = copy_book(tmp_path)
    command = start(root, *args)  # killed while its chapters run
    try:
        wait_for(
            lambda: sum(marker in c for c in descendants(command.pid).values()) >= 2,
            240,
            f"two processes running {marker}",
        )
        time.sleep(settle)
        found = descendants(command.pid)
        command.kill()
        command.wait()
        time.sleep(1.0)
        assert alive(found) == [], {pid: found[pid][:80] for pid in alive(found)}
    finally:
        command.kill()
        command.wait()
    after = subprocess.run(
        [*COMMAND, "verify", "no-such-chapter"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        capture_output=True,
        text=True,
    )
    assert after.returncode == 2
    runs = root / "_executed" / "runs"
    assert not runs.exists() or list(runs.iterdir()) == []


def test_local_workers_killed_while_they_start_exit_when_they_get_there(tmp_path):
    root = copy_book(tmp_path)
    command = start(root, "run", "decay-headline", "-p", "n_seeds", "100000", "--workers", "2")
    try:
        found = wait_for(
            lambda: (
                (d := descendants(command.pid)) and any("popen_loky_posix" in c for c in d.values()) and d
            ),
            240,
            "a local worker",
        )
        command.kill()
        command.wait()
        wait_for(lambda: not alive(found), 30, "the workers to exit")
    finally:
        command.kill()
        command.wait()


def test_sigterm_while_a_chapter_runs_ends_in_one_line_and_leaves_nothing(tmp_path):
    root = copy_book(tmp_path)
    command = start(root, "run", "decay-retention", "-o", str(tmp_path / "out"), stderr=subprocess.PIPE)
    found = wait_for(
        lambda: (d := descendants(command.pid)) and any("ipykernel_launcher" in c for c in d.values()) and d,
        240,
        "the chapter's kernel",
    )
    command.send_signal(signal.SIGTERM)
    try:
        out, err = command.communicate(timeout=60)
    finally:  # a command that hangs is killed, so that it cannot outlive this test
        command.kill()
        command.wait()
    assert command.returncode == 143
    assert err.count("\n") == 1 and err.startswith("forgetting: error: stopped by SIGTERM"), err
    time.sleep(1.0)
    assert alive(found) == []
    assert list((root / "_executed" / "runs").iterdir()) == []
    assert not (tmp_path / "out").exists()


def _connection_files(*folders: Path) -> list[Path]:
    """Kernel connection files under ``folders``: jupyter_client's temporary ``tmp*.json``, a
    runtime folder's ``kernel-*.json``, or the pipeline's own."""
    return [
        path
        for folder in folders
        for path in folder.rglob("*.json")
        if path.name.startswith(("kernel-", "tmp")) and "results" not in path.parts
    ]


@pytest.mark.parametrize("moment", ["connection file written", "kernel process started"])
def test_sigterm_while_the_kernel_starts_leaves_no_connection_file(tmp_path, moment):
    """SIGTERM the moment the kernel's connection file exists (or its process does): the command
    ends in one line and no connection file of the run is left anywhere (its keys included);
    before, jupyter_client's ``tmp*.json`` stayed in the temporary folder."""
    root = copy_book(tmp_path / "book")
    temporary, runtime = tmp_path / "tmp", tmp_path / "runtime"
    temporary.mkdir()
    runtime.mkdir()
    env = {**as_a_user_runs_it(), "TMPDIR": str(temporary), "JUPYTER_RUNTIME_DIR": str(runtime)}
    command = start(
        root, "run", "decay-retention", "-o", str(tmp_path / "out"), stderr=subprocess.PIPE, env=env
    )
    places = (temporary, runtime, root)
    try:
        if moment == "connection file written":
            wait_for(lambda: _connection_files(*places), 240, "the kernel's connection file")
        else:
            wait_for(
                lambda: any("ipykernel_launcher" in c for c in descendants(command.pid).values()),
                240,
                "the kernel's process",
            )
        found = descendants(command.pid)
        command.send_signal(signal.SIGTERM)
        _, err = command.communicate(timeout=60)
    finally:  # a command that hangs is killed, so that it cannot outlive this test
        command.kill()
        command.wait()
    wait_for(lambda: not alive(found), 30, "the kernel to end with its command")
    assert command.returncode == 143, err
    assert err.count("\n") == 1 and err.startswith("forgetting: error: stopped by SIGTERM"), err
    assert _connection_files(*places) == []
    assert list((root / "_executed" / "runs").iterdir()) == []


SIGNAL_DURING_IMPORT = textwrap.dedent(
    """
    import importlib.abc, importlib.util, os, signal, sys, time
    sys.path.insert(0, {src!r})

    class SlowCli(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        # the command line's heavy import, interrupted half-way by the signal under test
        def find_spec(self, name, path, target=None):
            if name == "forgetting.pipeline.cli":
                return importlib.util.spec_from_loader(name, self)
        def create_module(self, spec):
            return None
        def exec_module(self, module):
            os.kill(os.getpid(), signal.{signal})
            time.sleep(5)
            raise AssertionError("the signal did not stop the import")

    sys.meta_path.insert(0, SlowCli())
    from forgetting.pipeline import launch
    sys.exit(launch.main(["verify"]))
    """
)


@pytest.mark.parametrize(("name", "code"), [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 143)])
def test_a_signal_during_the_imports_ends_in_one_line(name, code):
    done = subprocess.run(
        [sys.executable, "-c", SIGNAL_DURING_IMPORT.format(src=str(SRC), signal=name)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == code
    assert done.stderr.count("\n") == 1 and "before it started; nothing was done" in done.stderr, done.stderr


STOPPED_WHERE_FINALIZATION_HANGS = textwrap.dedent(
    """
    import atexit, os, signal, sys, time
    sys.path.insert(0, {src!r})
    from forgetting.pipeline import cli, launch
    from forgetting.pipeline.processes import Terminated

    atexit.register(time.sleep, 120)  # plays a destructor that waits forever at exit
    atexit.register(print, "at exit", flush=True)  # registered last, so it runs first

    def stopped(argv):
        {body}

    cli.main = stopped
    sys.exit(launch.main([]))
    """
)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("return 143  # cli.main caught SIGTERM and cleaned up", 143),
        ("return 130  # cli.main caught Ctrl-C and cleaned up", 130),
        ("raise Terminated(signal.SIGTERM)  # before cli.main could catch it", 143),
        ("raise KeyboardInterrupt  # before cli.main could catch it", 130),
        ("return 1  # a failure ends through the normal exit", None),
    ],
    ids=["SIGTERM caught", "Ctrl-C caught", "SIGTERM early", "Ctrl-C early", "failure (the control)"],
)
def test_a_stopped_command_ends_even_where_python_s_exit_would_hang(body, code):
    script = STOPPED_WHERE_FINALIZATION_HANGS.format(src=str(SRC), body=body)
    if code is None:  # the normal exit reaches the destructor and waits there
        with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as process:
            try:
                assert select.select([process.stdout], [], [], 60)[0], "no exit handler ran within 60 s"
                assert process.stdout.readline() == "at exit\n"
                with pytest.raises(subprocess.TimeoutExpired, match="timed out after 1 seconds"):
                    process.wait(timeout=1)
            finally:
                process.kill()
        return
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == code, done.stderr
    assert "at exit" not in done.stdout  # ended without Python's exit handlers


def test_a_signal_the_caller_ignores_stays_ignored():
    script = (
        f"import signal, sys; sys.path.insert(0, {str(SRC)!r}); signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
        "from forgetting.pipeline import launch, cli\n"
        "cli.main = lambda argv: signal.getsignal(signal.SIGHUP) is signal.SIG_IGN and 7\n"
        "sys.exit(launch.main([]))"
    )
    assert subprocess.run([sys.executable, "-c", script], timeout=60).returncode == 7


def as_a_user_runs_it() -> dict[str, str]:
    """The command's environment without pytest's mark: ipykernel does not watch the kernel's
    file descriptors 1 and 2 while ``PYTEST_CURRENT_TEST`` is set, so a kernel started without
    a standard output passed under pytest and crashed at start for the user (issue 42)."""
    env = {name: value for name, value in os.environ.items() if name != "PYTEST_CURRENT_TEST"}
    return {**env, "PYTHONPATH": str(SRC)}


@pytest.mark.parametrize("how", ["closed", "reader gone"])
def test_a_closed_stdout_is_not_a_crash(tmp_path, how):
    root = copy_book(tmp_path)
    env = as_a_user_runs_it()
    if how == "closed":
        done = subprocess.run(
            [*COMMAND, "run", "decay-retention", "-o", str(tmp_path / "out")],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            pass_fds=(),
            preexec_fn=lambda: os.close(1),
            timeout=300,
        )
        err, code = done.stderr, done.returncode
    else:
        with subprocess.Popen(
            [*COMMAND, "run", "decay-retention", "-o", str(tmp_path / "out")],
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as command:
            command.stdout.close()  # the reader goes away before the first line
            err = command.stderr.read()
            code = command.wait(timeout=300)
    assert code == 0, err
    assert err == ""
    assert (tmp_path / "out" / "results" / "decay-retention.json").is_file()


def _executing(root: Path, chapter: str) -> bool:
    """The run's notebook shows a finished cell: its kernel has started and runs the chapter."""
    for notebook in (root / "_executed" / "runs").glob(f"{chapter}.*/{chapter}.ipynb"):
        try:
            cells = json.loads(notebook.read_text())["cells"]
        except (OSError, ValueError, KeyError):  # being written
            continue
        if any(cell.get("metadata", {}).get("papermill", {}).get("status") == "completed" for cell in cells):
            return True
    return False


def test_a_kernel_killed_mid_run_ends_in_one_line(tmp_path):
    """The out-of-memory killer's SIGKILL to the kernel while a cell runs: one line that says the
    kernel died and by which signal, and that the published results are unchanged (it was 43
    lines ending in nbclient's ``DeadKernelError``); the run folder is removed."""
    root = copy_book(tmp_path)
    command = start(
        root,
        *("run", "decay-headline", "-p", "n_seeds", "100000", "-o", str(tmp_path / "out")),
        stderr=subprocess.PIPE,
        env=as_a_user_runs_it(),
    )
    try:
        wait_for(lambda: _executing(root, "decay-headline"), 240, "the chapter's first cell")
        (kernel,) = [pid for pid, line in descendants(command.pid).items() if "ipykernel_launcher" in line]
        os.kill(kernel, signal.SIGKILL)
        _, err = command.communicate(timeout=120)
    finally:  # a command that hangs is killed, so that it cannot outlive this test
        command.kill()
        command.wait()
    assert command.returncode == 1, err
    assert err.count("\n") == 1, err
    assert err.startswith("forgetting: error: chapter decay-headline failed: its kernel died"), err
    assert "SIGKILL" in err and "published results are unchanged" in err, err
    assert list((root / "_executed" / "runs").iterdir()) == []
    assert not (tmp_path / "out").exists()


def test_a_bound_process_dies_the_moment_its_parent_does():
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, subprocess, sys, time\n"
            "child = subprocess.Popen([sys.executable, '-m', 'forgetting.studies._lifetime', str(os.getpid()), '--',"
            " 'sleep', '60'])\n"
            "print(child.pid, flush=True)\n"
            "time.sleep(60)",
        ],
        env={**os.environ, "PYTHONPATH": str(SRC)},
        stdout=subprocess.PIPE,
        text=True,
    )
    with parent:
        child = int(parent.stdout.readline())
        wait_for(lambda: "sleep" in Path(f"/proc/{child}/cmdline").read_text(), 30, "the exec")
        parent.kill()
        parent.wait()
        time.sleep(0.5)
        assert alive([child]) == []


def test_the_binding_command_says_how_it_is_used():
    done = subprocess.run(
        [sys.executable, "-m", "forgetting.studies._lifetime", "not-a-pid", "sleep"],
        env={**os.environ, "PYTHONPATH": str(SRC)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stderr.startswith(
        "usage: python -m forgetting.studies._lifetime PID --"
    )


def test_the_site_build_is_bound_to_the_command(tmp_path, monkeypatch):
    """jupyter-book runs through the same binding as the kernels (tested above), so a killed
    `forgetting build` leaves no site build running."""
    from forgetting.pipeline import site
    from forgetting.pipeline.chapters import chapter_names

    root = tmp_path / "repo"
    (root / "book").mkdir(parents=True)
    (root / "_config.yml").write_text("title: x\n")
    (root / "_executed" / "site").mkdir(parents=True)
    for name in chapter_names():
        (root / "_executed" / "site" / f"{name}.ipynb").write_text("{}")
    seen = []

    def run(command, **kwargs):
        seen.append(command)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(site.subprocess, "run", run)
    site.build_site(root)
    (build,) = [command for command in seen if command[0] != "git"]  # the footer's version line asks git
    assert build[:5] == [sys.executable, "-m", "forgetting.studies._lifetime", str(os.getpid()), "--"]
    assert build[5].endswith("jupyter-book") and build[6] == "build"


def test_the_run_folder_of_a_killed_process_not_yet_reaped_is_removed(tmp_path):
    """A chapter process killed with its parent is a zombie until its new parent reaps it; it
    still answers kill(pid, 0), yet its run folder is an orphan."""
    from forgetting import pipeline

    root = tmp_path / "repo"
    (root / "book").mkdir(parents=True)
    (root / "_config.yml").write_text("title: x\n")
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    wait_for(lambda: _stat(child.pid) is not None and _stat(child.pid)[1] == "Z", 30, "a zombie")
    orphan = root / "_executed" / "runs" / f"decay-trace.{child.pid}.abc"
    orphan.mkdir(parents=True)
    pipeline.remove_orphans(root)
    assert not orphan.exists()
    child.wait()
