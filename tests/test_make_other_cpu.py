"""``python3 make.py other-cpu``, the CI gate of a second CPU (issue 42): the environment it
plays another CPU with. The gate itself (every chapter verified in it) runs in ``.ci/run``."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT


def _make():
    spec = importlib.util.spec_from_file_location("make", ROOT / "make.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make = _make()
DISPATCH = ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"]


@pytest.mark.parametrize(
    ("blas", "other"),
    [
        ("SkylakeX", "Haswell"),
        ("Cooperlake", "Haswell"),
        ("Haswell", "Sandybridge"),
        ("Zen", "Sandybridge"),
        (None, "Sandybridge"),
    ],
)
def test_another_kernel_family_than_this_cpus(blas, other):
    env = make.other_cpu_environment({"blas": blas, "dispatch": DISPATCH}, {"PATH": "/bin"})
    assert env["OPENBLAS_CORETYPE"] == other
    assert env["PATH"] == "/bin"


def test_every_simd_target_numpy_dispatches_to_is_disabled_and_libm_masked():
    env = make.other_cpu_environment({"blas": "SkylakeX", "dispatch": DISPATCH}, {})
    assert env["NPY_DISABLE_CPU_FEATURES"].split() == DISPATCH
    assert env["GLIBC_TUNABLES"] == "glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F"


def test_numpy_runs_its_baseline_loops_in_that_environment():
    probe = subprocess.run([sys.executable, "-c", make.CPU_PROBE], capture_output=True, text=True, check=True)
    env = make.other_cpu_environment(json.loads(probe.stdout), dict(os.environ))
    seen = subprocess.run(
        [sys.executable, "-c", make.CPU_PROBE], capture_output=True, text=True, check=True, env=env
    )
    assert json.loads(seen.stdout)["runs"] == []


@pytest.mark.parametrize("argv", [[], ["other"], ["test", "mw-exp1"]])
def test_a_command_make_py_does_not_know_prints_its_usage(argv, capsys):
    assert make.main(argv) == 2
    assert "make.py other-cpu" in capsys.readouterr().out
