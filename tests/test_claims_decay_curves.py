"""decay-curves: sentences of the fits and FSRS sections, held against the published record."""

import json

import pytest

from forgetting.pipeline.paths import repo_root
from forgetting.studies.curves.fits import FAMILIES

RECORD = json.loads((repo_root() / "data" / "results" / "decay-curves.json").read_text(encoding="utf-8"))
VALUES = RECORD["values"]


def test_two_exponentials_predict_left_out_points_worse_than_the_power_law():
    assert VALUES["loo_two_exponential_ebbinghaus1885"] > VALUES["loo_power_ebbinghaus1885"]


def test_the_power_laws_scale_sits_at_its_upper_bound():
    family = FAMILIES["power"]
    assert VALUES["power_fit_scale_ebbinghaus1885"] == family.upper[family.parameters.index("a")]


def test_no_family_leaves_aicc_undefined():
    """'no family here comes to that' (n - K - 1 <= 0): every published AICc is a number."""
    for family in FAMILIES:
        value = VALUES[f"aicc_{family}_ebbinghaus1885"]
        assert isinstance(value, float) and value == value, family


def test_every_exponent_the_engine_runs_at_is_checked():
    """The fsrs section: the engine's exponents are those of the parameters, each with a reference."""
    parameters = RECORD["parameters"]
    engine = sorted({*parameters["power_decays"], parameters["power_decay"]})
    assert VALUES["fsrs_engine_unchecked"] == 0
    rows = _fsrs_rows()
    covered = {row["decay"]: row["reference"] for row in rows}
    assert all(covered.get(d) not in (None, "", "none") for d in engine), covered


def _fsrs_rows():
    import csv

    path = repo_root() / "data" / "results" / "decay-curves-fsrs-check.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        return [{**row, "decay": float(row["decay"])} for row in csv.DictReader(handle)]


def test_the_power_law_is_second_and_ebbinghaus_first_by_every_measure():
    """'Ebbinghaus's own formula describes his savings best by every measure, the power law comes
    second by every measure, and the exponential last by' the measures glued (all but AICc, by
    which the sum of two exponentials is last)."""
    rankings = {key: value.split(" < ") for key, value in VALUES.items() if key.startswith("ranking_")}
    assert len(rankings) == VALUES["n_measures"] == 5
    assert all(order[:2] == ["ebbinghaus_log", "power"] for order in rankings.values())
    last = {key for key, order in rankings.items() if order[-1] == "exponential"}
    assert last == {
        "ranking_rmse_ebbinghaus1885",
        "ranking_aic_ebbinghaus1885",
        "ranking_bic_ebbinghaus1885",
        "ranking_loo_rmse_ebbinghaus1885",
    }
    assert rankings["ranking_aicc_ebbinghaus1885"][-1] == "two_exponential"
    assert VALUES["worst_by_two_exponential_ebbinghaus1885"] == "AICc"


def test_the_matched_power_law_keeps_the_exponentials_headline():
    """'The headline is therefore unchanged': the same FRR and footprint under both curves."""
    assert VALUES["matched_sessions_differing"] == 0
    assert VALUES["power_terminal_frr_mean"] == VALUES["exponential_terminal_frr_mean"]
    assert VALUES["power_footprint_reduction_mean"] == VALUES["exponential_footprint_reduction_mean"]


def test_the_benchmark_favours_the_heavier_tail_and_the_savings_fall_at_every_delay():
    """'The one spaced-repetition benchmark quoted here favours the heavier tail' (lower log loss
    at the smaller d), and 'Ebbinghaus's savings fall from ... to ...'."""
    assert VALUES["benchmark_v45_decay"] < VALUES["benchmark_v4_decay"]
    assert VALUES["benchmark_v45_logloss"] < VALUES["benchmark_v4_logloss"]
    import csv

    path = repo_root() / "data" / "results" / "decay-curves-ebbinghaus1885.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        savings = [float(row["savings"]) for row in csv.DictReader(handle)]
    assert len(savings) == VALUES["ebbinghaus_n_points"]
    assert all(later < earlier for earlier, later in zip(savings, savings[1:]))
    assert 100 * savings[0] == pytest.approx(VALUES["ebbinghaus_first_savings"], abs=1e-9)
    assert 100 * savings[-1] == pytest.approx(VALUES["ebbinghaus_last_savings"], abs=1e-9)
