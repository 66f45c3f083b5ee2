"""decay-curves: sentences of the fits and FSRS sections, held against the published record."""

import json

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
