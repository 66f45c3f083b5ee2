"""Sentences of the chapters that state a count, a share or an "every", held to the published
results (``data/results/``): if a republished result stopped backing a sentence, this fails."""

from __future__ import annotations

import csv
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "data" / "results"


def values(chapter: str) -> dict[str, object]:
    return json.loads((RESULTS / f"{chapter}.json").read_text(encoding="utf-8"))["values"]


def rows(name: str) -> list[dict[str, str]]:
    with (RESULTS / name).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_window_loses_most_facts_between_recalls_and_the_rest_after_the_last():
    """decay-headline ("Why the window's zero is built in") and decay-postmortems section 2."""
    headline = values("decay-headline")
    assert headline["frr_window"] == 0.0 and headline["frr_decay"] == 1.0
    assert headline["window_lost_after_last"] == headline["window_found_last_recall"]
    assert headline["window_found_last_recall"] < headline["n_facts"] / 2  # "most" between recalls
    spaced = {
        r["policy"]: r
        for r in rows("decay-postmortems-uniform-vs-spaced.csv")
        if r["schedule"].startswith("spaced")
    }
    assert len(spaced) == 2
    for row in spaced.values():  # every fact reaches its first recall under both policies
        assert float(row["first_recall_in_grace"]) == 1.0


def test_the_window_scores_zero_on_both_schedules_although_some_facts_reach_their_first_recall():
    """decay-postmortems section 2: the late first recall explains decay's score, not the window's."""
    table = {
        (r["schedule"].split()[0], r["policy"].split()[0]): r
        for r in rows("decay-postmortems-uniform-vs-spaced.csv")
    }
    for schedule in ("uniform", "spaced"):
        window = table[schedule, "Recency"]
        assert float(window["frr_mean"]) == 0.0 and float(window["frr_sd"]) == 0.0
        assert float(window["first_recall_in_grace"]) > 0.0
    assert float(table["uniform", "Ebbinghaus"]["first_recall_in_grace"]) < 0.5


def test_the_wall_clock_draft_depends_on_the_machine_at_every_latency_shape():
    """decay-postmortems section 3: for each shape the slowest machine keeps fewer facts than
    the fastest, and the reruns' digests differ in every setting."""
    grid = rows("decay-postmortems-wallclock-robustness.csv")
    for sigma in {r["sigma"] for r in grid}:
        shape = sorted((r for r in grid if r["sigma"] == sigma), key=lambda r: float(r["speed"]))
        assert float(shape[0]["frr_max"]) < float(shape[-1]["frr_min"]), sigma
    assert all(int(r["distinct_digests"]) > 1 for r in grid)
    record = values("decay-postmortems")
    assert record["grid_digests_differ"] == record["grid_settings"] == len(grid)


def test_the_fine_grids_widest_full_recall_window_is_the_schedules_ceiling():
    """decay-sweeps: the earliest turn a last recall can land on (every jitter factor at its
    low end, rounded as the generator rounds) leaves a silence of ``L - turn``; the fine grid's
    smallest window with full recall equals it, so more seeds cannot raise it."""
    from forgetting.studies.decay.sessions import SessionConfig

    record = json.loads((RESULTS / "decay-sweeps.json").read_text(encoding="utf-8"))
    parameters = record["parameters"]
    config = SessionConfig(
        seed=0,
        session_length=parameters["session_length"],
        recalls_per_foundational=parameters["recalls_per_foundational"],
    )
    import math

    def ceiling(low: float) -> int:
        earliest = 1
        for offset in config.recall_base_offsets[: config.recalls_per_foundational]:
            earliest = min(config.session_length, max(earliest + 1, 1 + round(offset * low)))
        return config.session_length - earliest

    low, high = config.recall_jitter
    # any factor the generator draws above its lower end; the end itself (random() == 0.0,
    # a chance of 2**-53 per draw) can round one turn earlier
    assert record["values"]["fine_min_w_full_recall"] == ceiling(math.nextafter(low, high))
    assert ceiling(low) <= ceiling(math.nextafter(low, high)) + 1
    assert record["values"]["window_min_w_full_recall"] <= ceiling(math.nextafter(low, high))


def test_the_noise_sweep_cannot_move_the_frr():
    """decay-sweeps, decay-curves: noise draws no random number and no engine has a capacity, so
    a seed's foundational recalls, and the turns each fact is evicted, are the same at every
    noise level; the published sweep is flat with zero spread."""
    from forgetting.decay.engines import EbbinghausEngine, RecencyWindow
    from forgetting.studies.decay.sessions import SessionConfig, generate_session
    from forgetting.studies.decay.simulation import simulate

    record = json.loads((RESULTS / "decay-sweeps.json").read_text(encoding="utf-8"))
    levels = record["parameters"]["noise_levels"]
    for seed in range(5):
        sessions = [generate_session(SessionConfig(seed=seed, noise_per_turn=n)) for n in levels]
        facts = [[e for e in s.events if not e[2].startswith("noise_")] for s in sessions]
        assert all(f == facts[0] for f in facts), seed
        for make in (
            lambda: EbbinghausEngine(eviction_threshold=0.2, baseline_stability=8.0),
            lambda: RecencyWindow(window_size=15),
        ):
            traces = [simulate(make(), s) for s in sessions]
            ids = sessions[0].foundational_ids
            evictions = [[t.evicted_turn.get(i) for i in ids] for t in traces]
            assert all(e == evictions[0] for e in evictions), seed
    for row in rows("decay-sweeps-noise.csv"):
        assert float(row["decay_frr_sd"]) == 0.0 and float(row["window_frr_sd"]) == 0.0


def test_the_sensitivity_grid_is_the_headline_split_everywhere_and_the_failure_case_loses_all():
    """decay-sweeps: every (theta, W) of the grid keeps every fact under decay and none under the
    window; with no recalls both policies lose every fact."""
    for row in rows("decay-sweeps-sensitivity.csv"):
        assert float(row["decay_frr_mean"]) == 1.0 and float(row["window_frr_mean"]) == 0.0, row
    for row in rows("decay-sweeps-failure.csv"):
        assert float(row["frr_mean"]) == 0.0 and float(row["frr_sd"]) == 0.0, row


def test_the_exp5_end_value_falls_short_of_the_paper_because_its_start_is_lower():
    """mw-exp5 ("When did the shift happen?"): with the published evidence ratio, the
    evidence-weighted average from the paper's start lands near the paper's end, from this
    world's own start near the chapter's expectation, and starting from this world's start
    needs a smaller ratio (a later shift) to reach the paper's end."""
    v = values("mw-exp5")
    ratio, after = v["stale_evidence_ratio"], v["stale_p_plus_after"]

    def end(start: float) -> float:
        return (start + ratio * after) / (1 + ratio)

    assert abs(end(v["paper_stale_before"]) - v["paper_stale_after"]) < 0.01
    assert abs(end(v["stale_p_plus_before"]) - v["stale_expected_after"]) < 0.005
    assert v["stale_expected_after"] < v["paper_stale_after"]
    own_ratio = (v["stale_p_plus_before"] - v["paper_stale_after"]) / (v["paper_stale_after"] - after)
    assert own_ratio < v["paper_ratio_needed"]
    assert v["stale_mw_before_mean"] < v["paper_stale_before"]


def test_exp1_mean_differs_from_the_papers_if_its_spread_is_an_sd_over_seeds():
    """mw-exp1: reading the paper's spread as an sd over the same number of seeds, the gap
    between the two means exceeds 1.96 standard errors of their difference."""
    v = values("mw-exp1")
    paper_se = v["paper_rho_spread"] / v["n_seeds"] ** 0.5
    z = abs(v["rho_gap"]) / (paper_se**2 + v["rho_se"] ** 2) ** 0.5
    assert z > 1.96, z
    assert abs(v["rho_sd"] - v["paper_rho_spread"]) < 0.01


def test_exp1_strict_reading_narrows_the_consistent_range_of_k():
    """mw-exp1, sensitivity to k: under the sd-over-seeds reading fewer depths match the paper."""
    v = values("mw-exp1")
    paper_se = v["paper_rho_spread"] / v["n_seeds"] ** 0.5
    sweep = rows("mw-exp1-depth-sweep.csv")
    loose = {r["k"] for r in sweep if r["consistent_with_paper"] == "True"}
    strict = {
        r["k"]
        for r in sweep
        if abs(float(r["rho_mean"]) - v["paper_rho"]) <= 1.96 * (paper_se**2 + float(r["rho_se"]) ** 2) ** 0.5
    }
    assert strict < loose, (strict, loose)


def test_exp4_match_needs_the_default_k_and_pair_rate():
    """mw-exp4: the base-seed range contains the published threshold at the default k and pair
    rate, and the other k and the other pair rate each put the threshold below it."""
    v = values("mw-exp4")
    assert v["threshold_min"] <= v["paper_threshold"] <= v["threshold_max"]
    assert v["threshold_depth"] < v["paper_threshold"] and v["threshold_pair_rate"] < v["paper_threshold"]
