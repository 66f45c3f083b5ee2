"""The kernels a chapter runs in: encrypted channels (no plain-text TCP), in the pipeline and with
``papermill --engine forgetting``, and ended without a shutdown request (whose handling races
inside ipykernel); plain papermill's kernel is the contrast."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import papermill
import pytest
from papermill.engines import papermill_engines

from forgetting.pipeline.kernel import (
    EncryptedEngine,
    EncryptedKernelManager,
    ParentBoundKernelManager,
    kernel_options,
)

pytestmark = pytest.mark.slow  # each test starts a kernel
NOTICE = "Kernel is running over TCP without encryption"


def _tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 6 * 7\nx")]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, path)
    return path


def _run(tmp_path: Path, capfd: pytest.CaptureFixture[str], **options: object) -> str:
    """Execute the tiny notebook; return what its kernel wrote to stderr (the kernel inherits it)."""
    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(
        str(_tiny(tmp_path)), str(out), kernel_name="python3", progress_bar=False, **options
    )
    assert nbformat.read(out, as_version=4).cells[0].outputs[0]["data"]["text/plain"] == "42"
    return capfd.readouterr().err


def test_plain_papermill_talks_to_its_kernel_in_plain_text(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    assert NOTICE in _run(tmp_path, capfd)


@pytest.mark.parametrize("manager", [EncryptedKernelManager, ParentBoundKernelManager])
def test_the_pipeline_kernels_are_encrypted(
    manager: type, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    assert NOTICE not in _run(tmp_path, capfd, kernel_manager_class=manager)


def test_the_engine_module_imports_first_without_a_cycle() -> None:
    """papermill loads the engine's module while papermill itself is importing."""
    code = (
        "import forgetting.pipeline.kernel, papermill.engines as e;"
        "print(e.papermill_engines.get_engine('forgetting').__name__)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout.strip()) == (0, "EncryptedEngine"), result.stderr[-2000:]


def test_the_forgetting_engine_is_registered_and_encrypts(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    assert papermill_engines.get_engine("forgetting") is EncryptedEngine
    assert NOTICE not in _run(tmp_path, capfd, engine_name="forgetting")


def test_the_pipeline_does_not_interrupt_a_kernel_it_is_shutting_down() -> None:
    """jupyter_client interrupts before each shutdown request; the pipeline's manager skips that
    signal, and only that one (with no kernel running, an interrupt is still refused)."""
    import asyncio

    for manager in (
        EncryptedKernelManager(kernel_name="python3"),
        ParentBoundKernelManager(kernel_name="python3"),
    ):
        with pytest.raises(RuntimeError, match="No kernel is running"):
            asyncio.run(manager._async_interrupt_kernel())
    manager.shutting_down = True
    asyncio.run(manager._async_interrupt_kernel())  # nothing to signal, and no error


#: An IPython startup file: the kernel writes its pid, and a marker when a shutdown request
#: reaches it (before handling it: the process may end before the handler returns).
WITNESS = """
import os, pathlib
here = pathlib.Path(os.environ["WITNESS_DIR"])
(here / "pid").write_text(str(os.getpid()))
kernel = get_ipython().kernel
handle = kernel.control_handlers["shutdown_request"]
async def shutdown_request(*args, **kwargs):
    (here / "asked").write_text("shutdown request received")
    await handle(*args, **kwargs)
kernel.control_handlers["shutdown_request"] = shutdown_request
"""


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize(
    "options, asked",
    [
        ({}, True),  # plain papermill: the contrast
        (kernel_options(), False),
        ({"engine_name": "forgetting"}, False),
    ],
    ids=["plain papermill", "pipeline", "engine"],
)
def test_a_kernel_is_ended_without_a_shutdown_request_and_is_gone(
    options: dict[str, object],
    asked: bool,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-witness.py").write_text(WITNESS)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("WITNESS_DIR", str(tmp_path))
    _run(tmp_path, capfd, **options)
    assert (tmp_path / "asked").exists() is asked
    pid = int((tmp_path / "pid").read_text())
    deadline = time.monotonic() + 10
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid), f"kernel {pid} still running after its notebook ended"


#: An IPython startup file: the kernel writes the path of the connection file it was given.
CONNECTION_WITNESS = """
import os, pathlib
from ipykernel.kernelapp import IPKernelApp
pathlib.Path(os.environ["WITNESS_DIR"], "connection").write_text(IPKernelApp.instance().abs_connection_file)
"""


def test_the_pipeline_names_the_folder_of_the_connection_file(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel's connection file (its keys included) goes into the folder the pipeline names
    and removes, not jupyter_client's ``tmp*.json`` in the temporary folder, which a command
    stopped while the kernel started left behind; the manager lists the kernel's process, whose
    exit status says how it ended (an immediate shutdown kills it)."""
    import tempfile

    from forgetting.pipeline.kernel import kernel_exit

    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-connection.py").write_text(CONNECTION_WITNESS)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("WITNESS_DIR", str(tmp_path))
    temporary, folder = tmp_path / "tmp", tmp_path / "connections"
    temporary.mkdir()
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    options = kernel_options(folder)
    _run(tmp_path, capfd, **options)
    used = Path((tmp_path / "connection").read_text())
    assert used.parent == folder and used.name.startswith("kernel-") and used.suffix == ".json"
    assert list(temporary.iterdir()) == []
    assert len(options["kernel_manager_class"].processes) == 1
    assert kernel_exit(options) == "killed by SIGKILL"
    assert kernel_options()["kernel_manager_class"] is ParentBoundKernelManager  # no folder: as before
