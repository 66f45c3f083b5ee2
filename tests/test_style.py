"""ruff's lint and format rules (pyproject.toml's [tool.ruff]) hold for the whole tree."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).parent / "ruff"


def ruff(*args):
    return subprocess.run([str(RUFF), *args], cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_lint_passes():
    result = ruff("check", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_leaves_every_file_unchanged():
    result = ruff("format", "--check", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr
