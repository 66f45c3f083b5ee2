"""decay-retention: at the window's cut-off the plain item is under theta and the reinforced one is not."""

from __future__ import annotations

import json
import math
from pathlib import Path

from forgetting.decay.curves import retention, stability_after_recalls

RESULTS = Path(__file__).resolve().parents[1] / "data" / "results"


def test_at_the_window_cut_off_the_plain_item_is_under_theta_and_the_reinforced_one_is_not():
    record = json.loads((RESULTS / "decay-retention.json").read_text(encoding="utf-8"))
    parameters, values = record["parameters"], record["values"]
    s0, w = parameters["baseline_stability"], parameters["window_size"]
    reinforced = stability_after_recalls(parameters["reinforced_recalls"], s0)
    assert math.isclose(values["retention_plain_window"], retention(w, s0), rel_tol=1e-9)
    assert math.isclose(values["retention_reinforced_window"], retention(w, reinforced), rel_tol=1e-9)
    assert (
        values["retention_plain_window"]
        < parameters["eviction_threshold"]
        < values["retention_reinforced_window"]
    )
