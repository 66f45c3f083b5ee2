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
