"""The science packages pass ``mypy --strict`` (skipped where mypy is not installed)."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")
SRC = Path(__file__).resolve().parents[1] / "src" / "forgetting"
TARGETS = ["decay", "worth", "worlds", "_validate.py", "stats.py", "hashing.py"]


def test_mypy_strict_on_the_science_packages():
    result = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
                             "--ignore-missing-imports", "--no-incremental", *(str(SRC / t) for t in TARGETS)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
