"""The benchmark scripts still run on the current library (at their smallest size; nothing is timed here)."""

import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # left out of the fast tier (make.py fast)

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _locomo_available() -> bool:
    from forgetting.conversations import DataUnavailable, locomo_zip

    try:
        locomo_zip(download=False)
    except DataUnavailable:
        return False
    return True


BENCHES = [
    ("bench_decay.py", ["--repeat", "1", "--max-seeds", "2"]),
    ("bench_scaling.py", ["--sizes", "100", "--turns", "20", "--repeat", "1"]),
    ("bench_worth.py", ["--sizes", "100", "--episodes", "100", "--scalar-episodes", "100", "--repeats", "1"]),
    ("bench_encoder.py", ["-n", "4", "-b", "2", "-r", "1", "--no-reference", "--no-startup"]),
    ("bench_sweep.py", ["--seeds", "4", "--workers", "2", "--cluster-workers", "1"]),
    ("bench_feedback.py", ["--quick"]),
    ("bench_locomo.py", ["--quick", "--conversations", "1", "--workers", "1"]),
]
"""Each script at its smallest size; run in the background from the session's start (``command``)."""


def _param(script: str, args: list[str]):
    if script == "bench_locomo.py" and not _locomo_available():
        return pytest.param(script, args, marks=pytest.mark.skip(reason="no LoCoMo zip here"))
    return pytest.param(script, args, marks=pytest.mark.command([sys.executable, BENCHMARKS / script, *args]))


@pytest.mark.parametrize("script, args", [_param(script, args) for script, args in BENCHES])
def test_benchmark_script_runs(script, args, command_result):
    assert command_result.args[1:] == (str(BENCHMARKS / script), *args)
    assert command_result.returncode == 0, command_result.stdout + command_result.stderr
    assert command_result.stdout.strip(), f"{script} printed nothing"
