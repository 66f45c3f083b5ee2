"""decay-headline: sentences of the mechanism and the window's zero, held to the published record."""

from __future__ import annotations

import json
from pathlib import Path

from forgetting.studies.decay import study, timeline
from forgetting.studies.decay.sessions import SessionConfig

RESULTS = Path(__file__).resolve().parents[1] / "data" / "results"


def published() -> tuple[dict, dict, SessionConfig]:
    record = json.loads((RESULTS / "decay-headline.json").read_text(encoding="utf-8"))
    parameters = record["parameters"]
    config = SessionConfig(
        seed=0,
        session_length=parameters["session_length"],
        num_foundational=parameters["num_foundational"],
        recalls_per_foundational=parameters["recalls_per_foundational"],
        noise_per_turn=parameters["noise_per_turn"],
    )
    return parameters, record["values"], config


def test_no_fact_comes_near_its_threshold_and_no_seed_can_go_lower():
    """The lowest retention while held is 'k times theta', reaches the schedule's floor, and
    ten thousand seeds find nothing lower (the floor holds for any seed)."""
    parameters, values, config = published()
    theta = parameters["eviction_threshold"]
    assert (
        values["lowest_ratio"] == round(values["lowest_retention"] / theta, 1) and values["lowest_ratio"] > 2
    )
    assert values["lowest_retention"] == values["floor_retention"]
    many = timeline.lowest_held_retention(config, 10_000, study.DecayPolicy(theta))
    assert round(many.retention, 3) == values["floor_retention"]
    assert (many.elapsed, round(many.stability, 1)) == (values["floor_elapsed"], values["floor_stability"])


def test_every_fact_reaches_its_first_recall_and_a_wider_window_keeps_them_all():
    """'every fact is still present at its first recall', 'All ... that reach the last recall are
    then lost', and 'A wider window does keep the facts' (at a W no smaller than the certain loss)."""
    parameters, values, _ = published()
    assert values["window_found_first_recall"] == values["n_facts"]
    assert values["latest_first_recall"] - 1 <= study.WindowPolicy(parameters["window_size"]).grace_turns
    assert values["window_lost_after_last"] == values["window_found_last_recall"]
    assert parameters["window_size"] < values["certain_loss_below"]
    assert isinstance(values["min_w_full_recall"], int)
    assert values["certain_loss_below"] <= values["min_w_full_recall"] <= parameters["session_length"]
    assert values["min_w_footprint"] < values["footprint_decay"]


def test_the_floor_is_set_by_the_first_gap_and_the_third_nearly_ties_it():
    """The floor paragraph: 'the minimum is at the gap from registration to the first recall, at
    most 4 turns at S = 8.0 ... The gap between the second and the third recall nearly ties it: at
    most 20 turns at S ~ 40.06, a bound that also rounds to the floor'."""
    parameters, values, config = published()
    bounds = timeline.held_retention_bounds(config)
    floor = timeline.held_retention_floor(config)
    assert floor == bounds[0] and (floor.elapsed, floor.recalls) == (values["floor_elapsed"], 0)
    assert round(floor.stability, 1) == values["floor_stability"]
    runner_up = min(bounds[1:], key=lambda b: b.retention)
    assert (runner_up.recalls, runner_up.elapsed, round(runner_up.stability, 2)) == (2, 20, 40.06)
    assert runner_up.no_lower_than(floor) and not floor.no_lower_than(runner_up)
    assert round(runner_up.retention, 3) == values["floor_retention"]
    assert runner_up.retention - floor.retention < 0.001  # "nearly ties"
    assert all(b.retention > runner_up.retention for b in bounds if b not in (floor, runner_up))
