"""Play a CPU whose exp, log and pow round differently from this one's.

Python imports ``sitecustomize`` at start when its folder is on ``PYTHONPATH``; this one does
anything only when ``FORGETTING_ULP_NOISE`` names a folder (``tests/test_other_cpu.py`` sets both
for the chapter kernels it starts, and their worker processes inherit them; nothing else does).

Another CPU runs other SIMD code for ``np.exp``, ``np.log`` and the like (numpy picks it per CPU
at import; AVX-512 machines run other loops than AVX2 ones), and glibc's libm picks other FMA/AVX2
variants of ``exp`` and ``log``: none of them is correctly rounded, so their results differ in the
last unit or two (ulp). Here every float64 result of the functions in :data:`NUMPY_FUNCTIONS` and
:data:`MATH_FUNCTIONS` (numpy's module functions and ``math``'s, looked up as the library and its
dependencies look them up) is multiplied by ``1 + RELATIVE * u``, ``u`` uniform in [-1, 1) from a
fixed-seed generator: about four ulp, more than two real CPUs differ by. A result that is a whole
number (``exp(0) == 1``) is left alone, as every libm returns such exact cases exactly.

Not perturbed: the ``**`` operator and array methods (they do not go through the module
attribute), sums and means (numpy's pairwise summation adds the same terms in the same order on every
x86 target) and matrix
products (``../shared/tools/other-cpu-check`` varies OpenBLAS's kernels for real; perturbing every
``np.dot`` would also move matplotlib's own transforms, which no real CPU moves by four ulp).

``FORGETTING_ULP_NOISE_ONLY`` (comma-separated, e.g. ``numpy.log,math.exp``) narrows the set, to
find which function a difference comes from. Each process writes ``<pid>.json`` into the folder
(whole, by a rename): how many results it perturbed, per function, so a test can tell that the
perturbation ran. It writes it at exit, and also each time a function's number of perturbed calls
reaches a power of two (1, 2, 4, ...): a kernel that jupyter_client stops with SIGTERM, as it does
one that takes more than half its ``shutdown_wait_time`` to exit (a loaded machine), runs no
``atexit`` code, and its report still names every function it perturbed.
"""

from __future__ import annotations

import atexit
import json
import os
import threading

RELATIVE = 1e-15
"""Size of the perturbation relative to the result (``2**-52`` is ``2.2e-16``: about 4.5 ulp)."""
SEED = 20261201
SCALAR_BLOCK = 4096
"""Noise factors drawn at once for scalar results (a draw per call cost most of a call's time)."""
NUMPY_FUNCTIONS = ("exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "power", "float_power", "tanh")
MATH_FUNCTIONS = ("exp", "expm1", "log", "log1p", "log2", "log10", "pow", "tanh")


def _install(folder: str) -> None:
    import math

    import numpy as np

    rng = np.random.default_rng(SEED)
    counts: dict[str, int] = {}
    calls: dict[str, int] = {}

    def perturbed(name: str, results: int) -> None:
        counts[name] = counts.get(name, 0) + results
        done = calls[name] = calls.get(name, 0) + 1
        if done & (done - 1) == 0:  # a power of two: about log2(calls) writes
            report()

    def moved(name: str, value):  # type: ignore[no-untyped-def]
        if isinstance(value, np.ndarray) and value.dtype == np.float64:
            whole = np.isfinite(value) & (value == np.round(value))
            noise = 1.0 + RELATIVE * rng.uniform(-1.0, 1.0, value.shape)
            np.multiply(value, np.where(whole, 1.0, noise), out=value, casting="unsafe")
            perturbed(name, int(value.size - whole.sum()))
            return value
        if isinstance(value, (float, np.float64)) and math.isfinite(value) and value != round(value):
            perturbed(name, 1)
            return type(value)(value * scalar_factor())
        return value

    factors: list[float] = []  # 1 + RELATIVE * u for scalar results, drawn SCALAR_BLOCK at a time

    def scalar_factor() -> float:
        if not factors:
            factors.extend((1.0 + RELATIVE * rng.uniform(-1.0, 1.0, SCALAR_BLOCK)).tolist())
        return factors.pop()

    class Noisy:
        """``function`` with its float64 results moved; every attribute is the original's."""

        def __init__(self, name: str, function) -> None:  # type: ignore[no-untyped-def]
            self._name, self._function = name, function

        def __call__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            value = self._function(*args, **kwargs)
            if type(value) is float:  # math's results, millions of calls in a chapter: the short path
                if math.isfinite(value) and value != round(value):
                    perturbed(self._name, 1)
                    return value * scalar_factor()
                return value
            return moved(self._name, value)

        def __getattr__(self, attribute: str):  # type: ignore[no-untyped-def]
            return getattr(self._function, attribute)

    only = set(filter(None, os.environ.get("FORGETTING_ULP_NOISE_ONLY", "").split(",")))
    for module, names in ((np, NUMPY_FUNCTIONS), (math, MATH_FUNCTIONS)):
        for name in names:
            label = f"{module.__name__}.{name}"
            if not only or label in only:
                setattr(module, name, Noisy(label, getattr(module, name)))

    def report() -> None:  # written whole or not at all: a reader never sees a half-written file
        path = os.path.join(folder, f"{os.getpid()}.json")
        partial = f"{path}.{threading.get_ident()}.partial"  # two threads never share one
        with open(partial, "w") as handle:
            json.dump(dict(counts), handle)
        os.replace(partial, path)

    atexit.register(report)


if os.environ.get("FORGETTING_ULP_NOISE"):
    _install(os.environ["FORGETTING_ULP_NOISE"])
