"""The whole library passes ``mypy --strict`` (configured in pyproject.toml's [tool.mypy])."""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # left out of the fast tier (make.py fast)

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_strict_on_the_library():
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues found in" in result.stdout
