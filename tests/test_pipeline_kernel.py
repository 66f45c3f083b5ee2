"""The kernels a chapter runs in: encrypted channels (no plain-text TCP), in the pipeline and with
``papermill --engine forgetting``; plain papermill's kernel is the contrast."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import papermill
import pytest
from papermill.engines import papermill_engines

from forgetting.pipeline.kernel import EncryptedEngine, EncryptedKernelManager, ParentBoundKernelManager

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
