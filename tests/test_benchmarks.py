"""The benchmark scripts still run on the current library (at their smallest size; nothing is timed here)."""

import subprocess
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


@pytest.mark.parametrize(
    "script, args",
    [
        ("bench_decay.py", ["--repeat", "1", "--max-seeds", "2"]),
        ("bench_scaling.py", ["--sizes", "100", "--turns", "20", "--repeat", "1"]),
        (
            "bench_worth.py",
            ["--sizes", "100", "--episodes", "100", "--scalar-episodes", "100", "--repeats", "1"],
        ),
        ("bench_encoder.py", ["-n", "4", "-b", "2", "-r", "1", "--no-reference", "--no-startup"]),
        ("bench_sweep.py", ["--seeds", "4", "--workers", "2", "--cluster-workers", "1"]),
        ("bench_feedback.py", ["--quick"]),
        pytest.param(
            "bench_locomo.py",
            ["--quick", "--conversations", "1", "--workers", "1"],
            marks=pytest.mark.skipif(not _locomo_available(), reason="no LoCoMo zip here"),
        ),
    ],
)
def test_benchmark_script_runs(script, args):
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip(), f"{script} printed nothing"
