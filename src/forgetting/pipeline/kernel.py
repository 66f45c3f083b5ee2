"""The Jupyter kernel a chapter runs in, started so that it dies with the process that started it.

:class:`ParentBoundKernelManager` is jupyter_client's ``AsyncKernelManager`` (nbclient's and so
papermill's default) with one change: the kernel's command goes through ``python -m
forgetting._lifetime PID --``, which asks Linux to kill it when process ``PID`` dies and then
``exec``\\ s the kernel unchanged (the request survives ``exec``). A kernel is then never left
running by a command killed with SIGKILL, even in its first second, before ipykernel's own
parent poller starts. papermill takes it as ``kernel_manager_class``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from jupyter_client.manager import AsyncKernelManager


class ParentBoundKernelManager(AsyncKernelManager):
    """A kernel manager whose kernels die with this process (see the module)."""

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        command: list[str] = super().format_kernel_cmd(extra_arguments)
        return [sys.executable, "-m", "forgetting._lifetime", str(os.getpid()), "--", *command]


def kernel_options() -> dict[str, Any]:
    """What :func:`papermill.execute_notebook` takes to start kernels this way."""
    return {"kernel_manager_class": ParentBoundKernelManager}
