"""The perturbing ``sitecustomize`` of ``tests/test_other_cpu.py`` reports what it moved, even
from a process that a signal stops before its exit code runs."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import signal
import subprocess
import sys

import pytest

from conftest import NOISE


def _noise_module():  # loaded by path; it installs nothing without FORGETTING_ULP_NOISE
    spec = importlib.util.spec_from_file_location("ulp_noise", NOISE / "sitecustomize.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RELATIVE = _noise_module().RELATIVE

PROGRAM = """
import math, os, signal, sys
import numpy as np
values = np.exp(np.array([0.5, 1.5, 0.0]))  # exp(0) == 1 is exact and left alone
x = math.log(3.0)
print(repr(values[0]), repr(values[2]), repr(x), flush=True)
if sys.argv[1] == "sigterm":
    os.kill(os.getpid(), signal.SIGTERM)
"""


def _run(tmp_path, how: str) -> tuple[subprocess.CompletedProcess, dict[str, int]]:
    env = {**os.environ, "PYTHONPATH": str(NOISE), "FORGETTING_ULP_NOISE": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, how], env=env, capture_output=True, text=True, timeout=60
    )
    reports = list(tmp_path.glob("*.json"))
    assert len(reports) == 1, (reports, done.stderr)
    assert list(tmp_path.glob("*.partial")) == []
    return done, json.loads(reports[0].read_text())


@pytest.mark.parametrize("how", ["exit", "sigterm"])
def test_a_process_reports_what_it_perturbed_however_it_ends(tmp_path, how):
    done, counts = _run(tmp_path, how)
    assert done.returncode == (-signal.SIGTERM if how == "sigterm" else 0), done.stderr
    assert counts == {"numpy.exp": 2, "math.log": 1}
    first, exact, log3 = (float(v.removeprefix("np.float64(").rstrip(")")) for v in done.stdout.split())
    assert exact == 1.0
    for moved, value in ((first, math.exp(0.5)), (log3, math.log(3.0))):
        assert 0 < abs(moved - value) <= RELATIVE * value, (moved.hex(), value.hex())
