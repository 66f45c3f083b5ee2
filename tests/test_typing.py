"""The whole library passes ``mypy --strict`` (configured in pyproject.toml's [tool.mypy])."""

import sys

import pytest

pytestmark = pytest.mark.slow  # left out of the fast tier (make.py fast)


@pytest.mark.command([sys.executable, "-m", "mypy", "--no-incremental"])
def test_mypy_strict_on_the_library(command_result):
    assert command_result.returncode == 0, command_result.stdout + command_result.stderr
    assert "no issues found in" in command_result.stdout
