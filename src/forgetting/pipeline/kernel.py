"""The Jupyter kernel a chapter runs in: its channels encrypted, and bound to the process that
started it.

papermill's default kernel manager talks to the kernel over TCP on localhost in plain text,
which ipykernel reports at start ("Kernel is running over TCP without encryption").
:class:`EncryptedKernelManager` is jupyter_client's ``AsyncKernelManager`` (nbclient's and so
papermill's default) with CurveZMQ transport encryption provisioned whenever the kernelspec
declares support for it (ipykernel's does), so the kernel has nothing to report.
:class:`ParentBoundKernelManager` adds one change: the kernel's command goes through ``python
-m forgetting.studies._lifetime PID --``, which asks Linux to kill it when process ``PID`` dies and then
``exec``\\ s the kernel unchanged (the request survives ``exec``). A kernel is then never left
running by a command killed with SIGKILL, even in its first second, before ipykernel's own
parent poller starts. papermill takes either as ``kernel_manager_class``; the papermill engine
``forgetting`` (:class:`EncryptedEngine`, ``papermill --engine forgetting``) uses the first.

Both the pipeline (:func:`kernel_options`) and the engine end a kernel with nbclient's
``shutdown_kernel="immediate"``: it is killed once its last cell (or the failed one) has
answered, instead of being sent a shutdown request. By then nbclient holds every output and the
kernel has nothing left to do; the processes it started die with it (the local workers of
:class:`forgetting.studies.executor.ProcessPool` are bound to it as it is bound to us). A shutdown
request, on the other hand, races inside ipykernel 7.4: after handling it, the control thread
publishes an "idle" status that can meet the I/O thread's event pipe already closed by the main
thread, and tornado then prints a ``ZMQError: Socket operation on non-socket`` traceback on the
kernel's stderr, which is the terminal's (seen once in CI, under a chapter that had failed;
ipykernel's PR 1518 catches the same error where the message is sent, ``_really_send``, but not
where the send is scheduled, ``IOPubThread.schedule``, which is where it was raised).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import uuid
from typing import Any, ClassVar

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

    #: The folder its kernels' connection files go in (``None``: jupyter_client's temporary file,
    #: ``tmp*.json`` in the temporary folder, which a command stopped while its kernel started
    #: left there) and the kernel processes it started, in order. :func:`kernel_options` gives
    #: each run a subclass with its own of both.
    connection_folder: ClassVar[str | None] = None
    processes: ClassVar[list[Any] | None] = None

    @default("connection_file")
    def _connection_file_in_folder(self) -> str:
        if self.connection_folder is None:
            return ""
        return os.path.join(self.connection_folder, f"kernel-{uuid.uuid4()}.json")

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
        await super()._async_launch_kernel(kernel_cmd, **kw)
        if self.processes is not None:  # its exit status says how a kernel died
            self.processes.append(getattr(self.provisioner, "process", None))

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        command: list[str] = super().format_kernel_cmd(extra_arguments)
        return [sys.executable, "-m", "forgetting.studies._lifetime", str(os.getpid()), "--", *command]


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


def kernel_options(connection_folder: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """What :func:`papermill.execute_notebook` takes to start and end kernels this way.

    With ``connection_folder`` (an existing folder that the caller removes, however it ends),
    the kernels' connection files go there, and the manager class is this call's own subclass
    of :class:`ParentBoundKernelManager`, whose ``processes`` lists the kernels it started
    (:func:`kernel_exit`)."""
    manager: type[ParentBoundKernelManager] = ParentBoundKernelManager
    if connection_folder is not None:
        manager = type(
            "RunKernelManager",
            (ParentBoundKernelManager,),
            {"connection_folder": os.fspath(connection_folder), "processes": []},
        )
    return {"kernel_manager_class": manager, "shutdown_kernel": SHUTDOWN}


def kernel_exit(options: dict[str, Any]) -> str | None:
    """How the last kernel started with ``options`` (of :func:`kernel_options` with a folder)
    ended: ``"killed by SIGKILL"``, ``"exit status 1"``, or ``None`` (unknown, or still running)."""
    processes = getattr(options["kernel_manager_class"], "processes", None) or [None]
    code = processes[-1].poll() if processes[-1] is not None else None
    if code is None:
        return None
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def end_kernels(options: dict[str, Any]) -> None:
    """Kill the kernels started with ``options`` that still run, and wait for them: a kernel
    still starting could otherwise write its connection file again after the caller removed
    its folder (ipykernel creates the folder of a connection file it does not find)."""
    for process in getattr(options["kernel_manager_class"], "processes", None) or []:
        if process is not None and process.poll() is None:
            with contextlib.suppress(OSError):
                process.kill()
            with contextlib.suppress(Exception):
                process.wait(timeout=10)
