"""mw-exp2's sentences about the confound's limit, the noise within a task type and the
calibration grid, held to the world and to the published grid (``data/results/``)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from forgetting.studies import worlds

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "data" / "results"
PARAMETERS = json.loads((RESULTS / "mw-exp2.json").read_text(encoding="utf-8"))["parameters"]
VALUES = json.loads((RESULTS / "mw-exp2.json").read_text(encoding="utf-8"))["values"]


def published_world() -> worlds.ConfoundWorld:
    p = PARAMETERS
    return worlds.ConfoundWorld(
        n_generalists=p["n_generalists"],
        n_specialists=p["n_specialists"],
        retrieved_per_episode=p["retrieved_per_episode"],
        n_episodes=p["n_episodes"],
        hard_fraction=p["hard_fraction"],
        easy_base_rate=p["easy_base_rate"],
        hard_base_rate=p["hard_base_rate"],
        memory_effect=p["memory_effect"],
        generalist_utility=tuple(p["generalist_utility"]),
        specialist_utility=tuple(p["specialist_utility"]),
    )


@pytest.fixture(scope="module")
def result() -> worlds.ConfoundResult:
    return worlds.confound_experiment(published_world(), n_seeds=5, seed=PARAMETERS["seed"])


def test_in_the_limit_every_specialist_ranks_below_every_generalist(result):
    """ "with unlimited episodes every specialist still ranks below every generalist": the exact
    p+ of the best specialist is below that of the worst generalist, in every seed."""
    g = PARAMETERS["n_generalists"]
    assert (result.p_plus[:, g:].max(axis=1) < result.p_plus[:, :g].min(axis=1)).all()


def test_the_worth_span_within_a_type_is_smaller_than_one_memorys_estimation_noise(result):
    """ "the worth of the best and the worst memory differ by at most e/k, smaller than the
    estimation noise of a single memory": in each task type, the spread of worth around the
    exact p+ over the memories that type retrieves exceeds e/k."""
    span = PARAMETERS["memory_effect"] / PARAMETERS["retrieved_per_episode"]
    assert VALUES["worth_span_within_type"] == pytest.approx(span)
    for c in (worlds.EASY, worlds.HARD):
        seen = ~np.isnan(result.p_plus_by_type[:, c])
        error = (result.worth_by_type[:, c] - result.p_plus_by_type[:, c])[seen]
        assert error.std() > span, (c, error.std())


def test_the_grid_claims_hold_in_every_cell_of_the_published_grid():
    """ "a stronger memory effect raises both, and more specialists lower the global one", and
    "per-type worth ranks positively" throughout the grid."""
    with (RESULTS / "mw-exp2-calibration-grid.csv").open(encoding="utf-8", newline="") as handle:
        grid = {(float(r["memory_effect"]), int(r["specialists"])): r for r in csv.DictReader(handle)}
    effects = sorted({e for e, _ in grid})
    counts = sorted({c for _, c in grid})
    assert len(grid) == VALUES["n_grid"] == VALUES["n_cond_positive"]
    for count in counts:
        for key in ("rho_global", "rho_conditioned"):
            column = [float(grid[effect, count][key]) for effect in effects]
            assert column == sorted(column), (count, key, column)
    for effect in effects:
        row = [float(grid[effect, count]["rho_global"]) for count in counts]
        assert row == sorted(row, reverse=True), (effect, row)


def test_the_world_is_said_to_be_calibrated_to_the_published_pair():
    # "This chapter builds a world whose settings were calibrated to give that pair of numbers"
    doc = " ".join((worlds.ConfoundWorld.__doc__ or "").split())
    assert "It is a calibration, stated as such." in doc
    assert "picked from a grid over the specialist count and the effect" in doc
