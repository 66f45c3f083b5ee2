"""Imports cost what they use: the engines, estimators and worlds load no heavy library.

scipy.signal, scipy.stats and scipy.optimize each take about a second to import, matplotlib
and pandas more; a researcher who imports the decay engine or Memory Worth pays for none of
them. The modules that need one import it inside the function that uses it. Nothing here is
timed: the test asserts which modules a fresh interpreter has loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("scipy.signal", "scipy.stats", "scipy.optimize", "matplotlib", "pandas")
LIGHT = (
    "forgetting",
    "forgetting.decay",
    "forgetting.worth",
    "forgetting.studies.worlds",
    "forgetting.studies.governance",
)


def loaded_after(module: str) -> list[str]:
    code = f"import json, sys; import {module}; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("module", LIGHT)
def test_importing_the_library_loads_no_heavy_module(module):
    loaded = loaded_after(module)
    assert module in loaded
    assert [m for m in loaded if m in HEAVY] == []


def test_the_check_sees_a_heavy_module_when_one_is_imported():
    assert "scipy.stats" in loaded_after("forgetting.studies.worlds.theory, scipy.stats")
