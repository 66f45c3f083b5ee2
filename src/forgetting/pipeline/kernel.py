"""The Jupyter kernel a chapter runs in: its channels encrypted, and bound to the process that
started it.

papermill's default kernel manager talks to the kernel over TCP on localhost in plain text,
which ipykernel reports at start ("Kernel is running over TCP without encryption").
:class:`EncryptedKernelManager` is jupyter_client's ``AsyncKernelManager`` (nbclient's and so
papermill's default) with CurveZMQ transport encryption provisioned whenever the kernelspec
declares support for it (ipykernel's does), so the kernel has nothing to report.
:class:`ParentBoundKernelManager` adds one change: the kernel's command goes through ``python
-m forgetting._lifetime PID --``, which asks Linux to kill it when process ``PID`` dies and then
``exec``\\ s the kernel unchanged (the request survives ``exec``). A kernel is then never left
running by a command killed with SIGKILL, even in its first second, before ipykernel's own
parent poller starts. papermill takes either as ``kernel_manager_class``; the papermill engine
``forgetting`` (:class:`EncryptedEngine`, ``papermill --engine forgetting``) uses the first.

Both the pipeline (:func:`kernel_options`) and the engine end a kernel with nbclient's
``shutdown_kernel="immediate"``: it is killed once its last cell (or the failed one) has
answered, instead of being sent a shutdown request. By then nbclient holds every output and the
kernel has nothing left to do; the processes it started die with it (the local workers of
:class:`forgetting.executor.ProcessPool` are bound to it as it is bound to us). A shutdown
request, on the other hand, races inside ipykernel 7.4: after handling it, the control thread
publishes an "idle" status that can meet the I/O thread's event pipe already closed by the main
thread, and tornado then prints a ``ZMQError: Socket operation on non-socket`` traceback on the
kernel's stderr, which is the terminal's (seen once in CI, under a chapter that had failed;
ipykernel's PR 1518 catches the same error where the message is sent, ``_really_send``, but not
where the send is scheduled, ``IOPubThread.schedule``, which is where it was raised).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from jupyter_client.manager import AsyncKernelManager
from traitlets import default

#: How a kernel is ended once its notebook is done (nbclient's option; see the module).
SHUTDOWN = "immediate"


class EncryptedKernelManager(AsyncKernelManager):
    """A kernel manager that encrypts the kernel's channels where the kernelspec allows it."""

    @default("transport_encryption")
    def _encrypted(self) -> str:
        return "auto"


class ParentBoundKernelManager(EncryptedKernelManager):
    """An encrypting kernel manager whose kernels die with this process (see the module).

    It does not interrupt a kernel it is shutting down: jupyter_client sends SIGINT before it
    ends a kernel, whether it then asks it to shut down or kills it, so that a busy kernel gets
    to read a request; a chapter's kernel is ended idle, after its last cell or the failed one,
    where the signal can only land inside a message handler, which ipykernel then logs as an
    error ("KeyboardInterrupt caught in kernel.").
    """

    async def _async_interrupt_kernel(self) -> None:
        if self.shutting_down:
            return
        await super()._async_interrupt_kernel()

    interrupt_kernel = _async_interrupt_kernel  # type: ignore[assignment]  # as AsyncKernelManager has it

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        command: list[str] = super().format_kernel_cmd(extra_arguments)
        return [sys.executable, "-m", "forgetting._lifetime", str(os.getpid()), "--", *command]


class EncryptedEngine:
    """papermill's nbclient engine with :class:`EncryptedKernelManager`, ending each kernel as the
    pipeline does (``--engine forgetting``; see the module).

    It delegates rather than subclasses, so that this module never imports papermill: papermill
    imports it while loading its engines."""

    @classmethod
    def execute_notebook(cls, nb: Any, kernel_name: str, **kwargs: Any) -> Any:
        from papermill.engines import NBClientEngine

        kwargs.setdefault("kernel_manager_class", EncryptedKernelManager)
        kwargs.setdefault("shutdown_kernel", SHUTDOWN)
        return NBClientEngine.execute_notebook(nb, kernel_name, **kwargs)

    @classmethod
    def nb_kernel_name(cls, nb: Any, name: str | None = None) -> Any:
        from papermill.engines import NBClientEngine

        return NBClientEngine.nb_kernel_name(nb, name)

    @classmethod
    def nb_language(cls, nb: Any, language: str | None = None) -> Any:
        from papermill.engines import NBClientEngine

        return NBClientEngine.nb_language(nb, language)


def kernel_options() -> dict[str, Any]:
    """What :func:`papermill.execute_notebook` takes to start and end kernels this way."""
    return {"kernel_manager_class": ParentBoundKernelManager, "shutdown_kernel": SHUTDOWN}
