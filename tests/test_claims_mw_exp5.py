"""mw-exp5's sentences about the two derivations of the shift and the sweep over k, against the record."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from forgetting.studies.published import load_published
from forgetting.studies.text.depth import derived_shift, expected_end_value
from forgetting.worth import DEFAULT_PRIOR

pytest_plugins = ("text_fixtures",)

RESULTS = Path(__file__).resolve().parents[1] / "data" / "results"


def record() -> dict[str, object]:
    return json.loads((RESULTS / "mw-exp5.json").read_text(encoding="utf-8"))["values"]


def table(name: str) -> list[dict[str, str]]:
    with (RESULTS / name).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_both_derivations_recomputed_from_the_published_rates():
    """The shift from the paper's start is the chapter's; from the world's own start it is later,
    and each start's expected end at its own shift is the paper's end value."""
    v, paper = record(), load_published()
    before, after = paper["mw-exp5.stale_mw_before"].value, paper["mw-exp5.stale_mw_after"].value
    rates = {
        "rate_before": v["stale_rate_before"],
        "rate_after": v["stale_rate_after"],
        "p_plus_after": v["stale_p_plus_after"],
    }
    n = v["episodes"]
    assert derived_shift(before, after, rates, n) == v["shift_episode"] == v["inferred_shift_episode"]
    own = derived_shift(v["stale_p_plus_before"], after, rates, n)
    assert own == v["shift_from_own_start"] and own > v["shift_episode"]
    assert abs(expected_end_value(before, rates, v["shift_episode"], n) - after) < 0.001
    assert abs(v["expected_end_own_shift"] - after) < 0.001
    assert math.isclose(
        expected_end_value(v["stale_p_plus_before"], rates, v["shift_episode"], n),
        v["stale_expected_after"],
        rel_tol=1e-9,
    )


def test_the_end_value_misses_the_paper_by_over_two_sd_but_not_its_own_expectation():
    v, paper_end = record(), load_published()["mw-exp5.stale_mw_after"].value
    assert v["end_gap_in_sd"] > 2
    se = v["stale_mw_after_sd"] / math.sqrt(v["n_seeds"])
    assert abs(v["stale_mw_after_mean"] - v["stale_expected_after"]) / se < 1.96
    own = next(
        r for r in table("mw-exp5-shift-sweep.csv") if int(r["shift_episode"]) == v["shift_from_own_start"]
    )
    assert abs(float(own["stale_mw_after_mean"]) - paper_end) < 2 * float(own["stale_mw_after_sd"])


def test_the_depth_sweep_sentences():
    v, rows = record(), table("mw-exp5-depth-sweep.csv")
    paper_end = load_published()["mw-exp5.stale_mw_after"].value
    retrieved = [r for r in rows if float(r["stale_rate_before"]) > 0]
    never = [r for r in rows if float(r["stale_rate_before"]) == 0]
    assert [r["k"] for r in never] == v["depth_never_retrieved"].split(", ")
    assert all(
        float(r["stale_mw_after_mean"]) == DEFAULT_PRIOR and r["shift_from_paper_start"] == "" for r in never
    )
    ends = [float(r["stale_mw_after_mean"]) for r in retrieved]
    assert (min(ends), max(ends)) == (v["depth_end_low"], v["depth_end_high"])
    assert all(end < paper_end for end in ends)
    assert all(int(r["shift_from_own_start"]) > int(r["shift_from_paper_start"]) for r in retrieved)
    assert any(
        r["k"] == str(v["k"]) and int(r["shift_from_paper_start"]) == v["shift_episode"] for r in retrieved
    )


#: The first edition's specialists (commit 18edacc, shift at mid-run): seed 0 and the mean over seeds.
FIRST_EDITION_SPECIALISTS = (0.7740842190660514, 0.7735196171202288)


def _variant(label: str) -> dict[str, str]:
    return next(r for r in table("mw-exp5-variants.csv") if r["world"] == label)


def test_at_k_plus_one_the_correction_ends_low_value_below_the_stale_memory():
    """ "k = 4: the stale memory ends as low as at k = 3 (0.143), but the correction ends lower
    still, at 0.049, low-value"."""
    v = record()
    row = _variant(f"k = {v['k'] + 1}")
    stale, corrected = float(row["stale_mw_after"]), float(row["corrected_mw_after"])
    assert (round(stale, 3), round(corrected, 3)) == (0.143, 0.049)
    assert corrected < v["low_threshold"] and corrected < stale
    assert stale < v["low_threshold"] and int(row["seeds stale low-value"]) == v["n_seeds"]


def test_at_k_plus_one_every_query_retrieving_the_correction_retrieves_the_stale_memory(corpus, vectors):
    from forgetting.studies.text.corpus import AFTER
    from forgetting.studies.text.retrieval import retrieve

    k = record()["k"]
    fix, stale = corpus.index("fix-kubernetes"), corpus.index("stale-heroku")
    top = retrieve(corpus, vectors, AFTER, k + 1).top
    with_fix = [row for row in top if fix in row]
    assert with_fix and all(stale in row for row in with_fix)
    assert not all(
        stale in row for row in retrieve(corpus, vectors, AFTER, k).top if fix in row
    )  # unlike at k


def test_the_unchanged_mix_row_keeps_the_shift_derived_with_the_changed_mix(corpus, vectors):
    """The unchanged-mix variant runs at the chapter's shift; derived from its own (lower)
    post-shift retrieval rate the shift would come much earlier."""
    from forgetting.studies.text.exp5 import RealTextWorld
    from forgetting.studies.text.outcome import OutcomeModel
    from forgetting.studies.text.shift import inferred_shift_episode, stale_rates
    from forgetting.studies.text.tables import variant_worlds

    v, paper = record(), load_published()
    world = RealTextWorld(
        n_episodes=v["episodes"], shift_episode=v["shift_episode"], k=v["k"], outcome=OutcomeModel()
    )
    same_mix = {name: w for name, _, w in variant_worlds(corpus, world)}["same_mix"]
    assert same_mix.shift_episode == v["shift_episode"]
    rates = stale_rates(corpus, vectors, same_mix)
    assert rates["rate_after"] < v["stale_rate_after"]
    before, after = paper["mw-exp5.stale_mw_before"].value, paper["mw-exp5.stale_mw_after"].value
    own = inferred_shift_episode(
        before, after, rates["p_plus_after"], v["episodes"], rates["rate_after"] / rates["rate_before"]
    )
    assert own < 0.6 * v["shift_episode"]


def test_the_specialists_shortfall_is_mostly_spec_release_and_the_first_edition_was_the_mid_run_shift():
    v, paper_specialist = record(), load_published()["mw-exp5.specialist_mw_mean"].value
    specialists = [
        r
        for r in table("mw-exp5-memories.csv")
        if r["role"] == "specialist" and r["class_after"] != "uncertain"
    ]
    worths = {r["memory"]: float(r["mw_after"]) for r in specialists}
    assert math.isclose(sum(worths.values()) / len(worths), v["specialist_mw_mean"], rel_tol=1e-9)
    others = [w for memory, w in worths.items() if memory != "spec-release"]
    assert v["specialist_mw_mean"] < paper_specialist < sum(others) / len(others)
    assert worths["spec-release"] == v["release_mw_after"]
    mid_run = next(
        r for r in table("mw-exp5-shift-sweep.csv") if int(r["shift_episode"]) == v["episodes"] // 2
    )
    # the table publishes 10 significant digits
    assert math.isclose(float(mid_run["specialist_mw_mean_mean"]), FIRST_EDITION_SPECIALISTS[1], rel_tol=1e-9)
    assert round(FIRST_EDITION_SPECIALISTS[0], 3) == round(FIRST_EDITION_SPECIALISTS[1], 3) == 0.774
    assert (
        v["sweep_specialist_low"]
        < v["specialist_mw_mean_mean"]
        < FIRST_EDITION_SPECIALISTS[1]
        < v["sweep_specialist_high"]
    )
