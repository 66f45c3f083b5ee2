"""forgetting.studies.text.depth: the shift derived from either start, the expected end, the sweep over k."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgetting.studies.text.depth import DEPTH_KEYS, depth_sweep, derived_shift, expected_end_value
from forgetting.studies.text.exp5 import RealTextWorld, run_episodes
from forgetting.studies.text.shift import stale_rates
from forgetting.studies.text.summary import summarise
from forgetting.worth import DEFAULT_PRIOR

pytest_plugins = ("text_fixtures",)

RATES = {"rate_before": 0.2, "rate_after": 0.4, "p_plus_after": 0.05}


@given(st.floats(0.3, 0.99), st.floats(0.1, 0.25), st.floats(0.01, 1.0), st.floats(0.01, 1.0))
def test_the_derived_shift_brings_the_expected_end_to_the_target(start, target, rate_before, rate_after):
    rates = {"rate_before": rate_before, "rate_after": rate_after, "p_plus_after": 0.05}
    n = 100_000
    shift = derived_shift(start, target, rates, n)
    if shift is None or not 1 <= shift < n:
        return
    # rounding the shift to a whole episode moves the end by at most one episode's share of evidence
    assert expected_end_value(start, rates, shift, n) == pytest.approx(target, abs=5e-3)


def test_a_lower_start_needs_less_post_shift_evidence_so_a_later_shift():
    assert derived_shift(0.75, 0.2, RATES, 3000) > derived_shift(0.95, 0.2, RATES, 3000)
    assert derived_shift(0.15, 0.2, RATES, 3000) is None  # a start below the target
    assert derived_shift(0.9, 0.04, RATES, 3000) is None  # a target below the post-shift rate


def test_the_expected_end_is_the_ratio_of_expected_counters():
    # 1000 episodes before at retrieval 0.2, 2000 after at 0.4: 200 units at 0.8, 800 at 0.05
    assert expected_end_value(0.8, RATES, 1000, 3000) == pytest.approx((200 * 0.8 + 800 * 0.05) / 1000)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: derived_shift(0.9, 0.2, {**RATES, "rate_before": 0.0}, 3000), r"rates\['rate_before'\]"),
        (lambda: derived_shift(1.5, 0.2, RATES, 3000), "start"),
        (lambda: expected_end_value(0.9, RATES, 3000, 3000), "shift_episode must be an int >= 1 and <= 2999"),
        (lambda: expected_end_value(0.9, {"rate_before": 0.2, "rate_after": 0.4}, 10, 3000), "p_plus_after"),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_the_expected_end_from_the_own_start_is_the_summarys_expectation(corpus, vectors):
    world = RealTextWorld(n_episodes=400, shift_episode=100)
    rates = stale_rates(corpus, vectors, world)
    summary = summarise(run_episodes(corpus, vectors, world))
    assert expected_end_value(rates["p_plus_before"], rates, 100, 400) == pytest.approx(
        summary["stale_expected_after"], rel=1e-12
    )


def test_the_sweep_has_one_row_per_k_and_marks_a_never_retrieved_stale_memory(corpus, vectors):
    world = RealTextWorld(n_episodes=300, shift_episode=100)
    rows = depth_sweep(corpus, vectors, world, [1, 3], n_seeds=2, paper_start=0.95, target=0.2)
    assert [row["k"] for row in rows] == [1, 3]
    for row in rows:
        assert {f"{key}_{part}" for key in DEPTH_KEYS for part in ("mean", "sd")} <= set(row)
        assert row["n_seeds"] == 2 and 0 <= row["seeds_stale_low_value"] <= 2
    one, three = rows
    assert one["stale_rate_before"] == 0.0  # at k = 1 the stale memory is no query's nearest memory
    assert one["shift_from_paper_start"] is None and one["expected_end"] is None
    assert one["stale_mw_after_mean"] == DEFAULT_PRIOR  # never retrieved: the prior
    assert (
        three["shift_from_own_start"] > three["shift_from_paper_start"]
    )  # its own start is below the paper-like start
    with pytest.raises(ValueError, match="n_seeds"):
        depth_sweep(corpus, vectors, world, [3], n_seeds=1, paper_start=0.95, target=0.2)


def test_depth_values_read_the_rows_and_name_a_never_retrieved_depth():
    from forgetting.studies.text.depth import depth_values, retrieved_rows

    def row(k, rate, end, paper_shift, own_shift, low=3):
        return {
            "k": k,
            "stale_rate_before": rate,
            "stale_rate_after": rate,
            "stale_mw_after_mean": end,
            "expected_end": end + 0.01,
            "shift_from_paper_start": paper_shift,
            "shift_from_own_start": own_shift,
            "seeds_stale_low_value": low,
            "n_seeds": 3,
        }

    rows = [row(1, 0.0, 0.5, None, None, 0), row(2, 0.1, 0.131, 600, 700), row(3, 0.2, 0.152, 650, 800)]
    assert [r["k"] for r in retrieved_rows(rows)] == [2, 3]
    values = depth_values(rows, [1, 2, 3], 0.183)
    assert (values["depth_ks"], values["depth_never_retrieved"], values["depth_n_never"]) == (
        "1, 2, 3",
        "1",
        1,
    )
    assert (values["depth_end_low"], values["depth_end_high"]) == (0.131, 0.152)
    assert values["depth_expected_max_gap"] == pytest.approx(0.01)
    assert (values["depth_paper_shift_low"], values["depth_own_shift_high"]) == (600, 800)
    assert values["depth_all_below_paper"] and values["depth_all_low_value"] and values["depth_own_later"]
    assert depth_values(rows[1:], [2, 3], 0.145)["depth_never_retrieved"] == "none"
    assert not depth_values(rows[1:], [2, 3], 0.145)["depth_all_below_paper"]
