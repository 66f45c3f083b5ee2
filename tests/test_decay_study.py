"""The decay study: the published numbers of the decay chapters, and determinism."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting import hashing
from forgetting.decay.engines import EbbinghausEngine
from forgetting.studies.decay import metrics, study
from forgetting.studies.decay.sessions import Session, SessionConfig, generate_session
from forgetting.studies.decay.simulation import simulate


def test_determinism_same_seed_same_trace():
    config = SessionConfig(seed=7)
    first = simulate(EbbinghausEngine(), generate_session(config))
    second = simulate(EbbinghausEngine(), generate_session(config))
    assert first == second
    assert hashing.digest(study.run_seeds(study.DECAY, config, 3)) == hashing.digest(
        study.run_seeds(study.DECAY, config, 3)
    )


def test_published_headline():
    config = SessionConfig(seed=0)
    decay, window = study.headline(config, 50)
    assert (decay["frr_mean"], decay["frr_sd"], window["frr_mean"], window["frr_sd"]) == (1.0, 0.0, 0.0, 0.0)
    assert (decay["facts_evicted_mean"], window["facts_evicted_mean"]) == (0.0, 3.0)
    assert round(decay["footprint_reduction_mean"], 3) == 0.911
    assert round(window["footprint_reduction_mean"], 3) == 0.898


def test_published_trace():
    config = SessionConfig(seed=0, num_foundational=1)
    decay = study.trace_session(study.DECAY, config)
    window = study.trace_session(study.WINDOW, config)
    assert [t for t, _, _ in decay.recalls] == [5, 10, 20, 39]
    assert window.evicted_turn["foundational_0"] == 36
    assert [ok for _, _, ok in window.recalls] == [True, True, True, False]
    assert [ok for _, _, ok in decay.recalls] == [True] * 4
    assert metrics.frr(decay, 30) == metrics.frr(window, 30) == 1.0
    assert decay.is_present_after("foundational_0", 150)


def test_published_sweeps_and_failure_case():
    config = SessionConfig(seed=0)
    for row in study.noise_sweep(config, [1, 20], 20):
        assert (row["decay_frr_mean"], row["window_frr_mean"]) == (1.0, 0.0)
        assert (row["decay_frr_sd"], row["window_frr_sd"]) == (0.0, 0.0)
    grid = study.sensitivity_sweep(config, [0.1, 0.3], [10, 50], 20)
    assert all(r["holds"] for r in grid)
    never = config.replace(recalls_per_foundational=0)
    assert study.headline(never, 20)[0]["frr_mean"] == 0.0
    assert study.headline(never, 20)[1]["frr_mean"] == 0.0


def test_mechanism_check_reads_the_published_mechanism():
    mechanism = study.mechanism_check(SessionConfig(seed=0))
    assert mechanism["recall_turns"] == "5, 10, 20, 39" and mechanism["recalls"] == 4
    assert round(mechanism["stability"]) == 292 and mechanism["turns_since"] == 111
    assert round(mechanism["retention"], 3) == 0.684


def test_mechanism_check_needs_a_fact():
    with pytest.raises(ValueError, match="num_foundational >= 1"):
        study.mechanism_check(SessionConfig(seed=0, num_foundational=0))


def test_headline_runs_are_byte_identical_when_rerun():
    """The determinism the decay-headline chapter also shows: two runs, one digest."""
    config = SessionConfig(seed=0)
    runs = {p.kind: study.run_seeds(p, config, 5) for p in (study.DECAY, study.WINDOW)}
    again = {p.kind: study.run_seeds(p, config, 5) for p in (study.DECAY, study.WINDOW)}
    assert hashing.digest(runs) == hashing.digest(again)


# --- the first recall: engine order and the statistic, on hand-made sessions ---------------


def hand_made(first_recall, later=(), length=12):
    """One foundational fact registered at turn 1 and recalled at ``first_recall`` (and ``later``)."""
    config = SessionConfig(
        seed=0,
        session_length=length,
        num_foundational=1,
        noise_per_turn=0,
        recalls_per_foundational=1 + len(later),  # what the events hold (4 may not fit in a short session)
    )
    events = [(1, "register", "foundational_0", True)]
    events += [(t, "recall", "foundational_0", True) for t in (first_recall, *later)]
    return Session(config, events, ["foundational_0"])


S0_TWO = study.DecayPolicy(0.20, 2.0)  # grace: evicted by step(1 + 4)


def test_the_short_grace_period_is_four_turns():
    assert S0_TWO.grace_turns == 4 and study.WINDOW.grace_turns == 16


@pytest.mark.parametrize("policy", [S0_TWO, study.DECAY, study.WINDOW])
def test_engine_order_a_recall_on_the_eviction_turn_itself_succeeds(policy):
    eviction_turn = 1 + policy.grace_turns
    on_time = simulate(policy.engine(), hand_made(eviction_turn, length=eviction_turn + 2))
    assert on_time.recalls == [(eviction_turn, "foundational_0", True)]  # recall, then step
    late = simulate(policy.engine(), hand_made(eviction_turn + 1, length=eviction_turn + 2))
    assert late.evicted_turn["foundational_0"] == eviction_turn
    assert late.recalls == [(eviction_turn + 1, "foundational_0", False)]


@pytest.mark.parametrize("policy", [S0_TWO, study.DECAY, study.WINDOW])
def test_first_recall_statistic_counts_the_eviction_turn_as_reached(policy):
    eviction_turn = 1 + policy.grace_turns
    for first, expected in [
        (2, True),
        (eviction_turn - 1, True),
        (eviction_turn, True),
        (eviction_turn + 1, False),
    ]:
        session = hand_made(first, length=eviction_turn + 2)
        assert study.first_recall_reached(session, policy) == [expected], first
    never = hand_made(3, length=12)
    never = Session(never.config, never.events[:1], never.foundational_ids)
    assert study.first_recall_reached(never, policy) == [False]


def test_reaches_first_recall_is_the_inclusive_gap():
    assert study.reaches_first_recall(1, 5, 4) and not study.reaches_first_recall(1, 6, 4)
    assert study.reaches_first_recall(3, 7, 4)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    stability=st.sampled_from([1.0, 2.0, 3.0, 4.0, 8.0]),
    first_offset=st.integers(1, 12),
    schedule=st.sampled_from(["spaced", "uniform"]),
)
def test_first_recall_statistic_agrees_with_the_replayed_trace(seed, stability, first_offset, schedule):
    """The shortcut (gap <= grace) is what the engine does: the trace's first recall finds the fact."""
    config = SessionConfig(
        seed=seed,
        session_length=60,
        noise_per_turn=1,
        schedule=schedule,
        uniform_range=(2, 60),
        recall_base_offsets=(first_offset, 20, 45),
        recalls_per_foundational=3,
    )
    session = generate_session(config)
    for policy in (study.DecayPolicy(0.2, stability), study.WindowPolicy(first_offset)):
        trace = simulate(policy.engine(), session)
        first_found = [
            next(ok for _, mem_id, ok in trace.recalls if mem_id == fid) for fid in session.foundational_ids
        ]
        assert study.first_recall_reached(session, policy) == first_found


def test_published_first_recall_shares():
    config = SessionConfig(seed=0)
    assert study.first_recall_in_grace(config, 50, S0_TWO) == 1.0  # every first recall lands in time
    assert study.first_recall_on_eviction_turn(config, 50, S0_TWO) == 25 / 150
    uniform = config.replace(schedule="uniform")
    assert study.first_recall_in_grace(uniform, 50, study.WINDOW) == 42 / 150  # 28.0 %
    assert study.first_recall_in_grace(uniform, 50, study.DECAY) == 22 / 150  # 14.7 %
    assert study.first_recall_in_grace(uniform, 50, S0_TWO) == 0.0


def test_recall_outcomes_locate_the_short_grace_losses_after_the_first_recall():
    rows = study.recall_outcomes(SessionConfig(seed=0), 50, S0_TWO)
    assert [(r["recall"], r["first_lost"]) for r in rows] == [(1, 0), (2, 3), (3, 9), (4, 1), (0, 0)]
    assert rows[0]["found"] == rows[0]["scheduled"] == 150
    window = study.recall_outcomes(SessionConfig(seed=0), 50, study.WINDOW)
    assert window[3]["found"] == 24 and window[-1] == {
        "recall": 0,
        "scheduled": 24,
        "found": 0,
        "first_lost": 24,
    }


def test_first_offset_sweep_shows_when_a_short_grace_loses_the_first_recall():
    rows = study.first_offset_sweep(SessionConfig(seed=0), 50, [3, 4, 8], [S0_TWO])
    shares = [r[S0_TWO.label] for r in rows]
    assert shares[0] == 1.0 and 0.0 < shares[1] < 1.0 and shares[2] == 0.0


def test_summaries_carry_an_sd_next_to_every_mean():
    summary = study.summarize_runs(study.run_seeds(S0_TWO, SessionConfig(seed=0), 50))
    assert set(summary) == {
        f"{n}_{s}"
        for n in ("frr", "survival_rate", "facts_evicted", "footprint_reduction")
        for s in ("mean", "sd")
    }
    assert round(summary["frr_mean"], 4) == 0.9133 and summary["frr_sd"] > 0


def test_earliest_losing_first_offset_matches_the_sweep():
    config = SessionConfig(seed=0)
    assert study.earliest_losing_first_offset(config, S0_TWO) == 4  # round(4 * 1.3) = 5 > 4
    assert study.earliest_losing_first_offset(config, study.DECAY) == 11
    for offset, policy in ((4, S0_TWO), (11, study.DECAY)):
        rows = study.first_offset_sweep(config, 50, [offset - 1, offset], [policy])
        assert rows[0][policy.label] == 1.0  # below it every seed is safe by construction
    assert study.earliest_losing_first_offset(config, study.WindowPolicy(10_000), max_offset=20) is None


def test_headline_values_name_each_metric_by_policy_and_match_the_published_entries():
    from forgetting.studies.published import load_published

    config = SessionConfig(seed=0, session_length=60)
    policies = (study.DecayPolicy(0.2), study.WindowPolicy(15))
    summary = {p.kind: study.summarize_runs(study.run_seeds(p, config, 3)) for p in policies}
    values = study.headline_values(summary)
    assert values["frr_decay"] == summary["decay"]["frr_mean"]
    assert values["footprint_window_sd"] == summary["window"]["footprint_reduction_sd"]
    assert values["evicted_window"] == summary["window"]["facts_evicted_mean"]
    assert len(values) == 2 * 2 * 4
    assert set(study.HEADLINE_ENTRIES) <= set(values)
    entries = load_published()
    assert all(f"decay-headline.{entry}" in entries for entry in study.HEADLINE_ENTRIES.values())
    rows = study.summary_rows(policies, summary)
    assert [r["policy"] for r in rows] == [p.label for p in policies]
    assert rows[1]["frr_mean"] == summary["window"]["frr_mean"]


def test_noise_and_sensitivity_values_read_the_sweeps():
    config = SessionConfig(seed=0, session_length=60)
    policies = (study.DecayPolicy(0.2), study.WindowPolicy(15))
    noise_rows = study.noise_sweep(config, [1, 4], 3, policies)
    values = study.noise_sweep_values(noise_rows)
    assert values["noise_frr_decay_max"] == noise_rows[-1]["decay_frr_mean"]
    assert values["noise_all_levels_hold"] == all(
        r["decay_frr_mean"] == 1.0 and r["window_frr_mean"] == 0.0 for r in noise_rows
    )
    grid = study.sensitivity_sweep(config, [0.1, 0.3], [5, 10, 40], 3)
    summary = study.sensitivity_values(grid)
    assert (summary["n_thresholds"], summary["n_windows"], summary["sensitivity_total"]) == (2, 3, 6)
    assert summary["widest_window"] == 40
    assert summary["widest_window_frr"] == grid[2]["window_frr_mean"] == grid[5]["window_frr_mean"]
    assert summary["sensitivity_holds"] == sum(r["holds"] for r in grid)
    thresholds, windows, advantage = study.sensitivity_advantage(grid)
    assert (thresholds, windows, advantage.shape) == ([0.1, 0.3], [5, 10, 40], (2, 3))
    assert advantage[1, 2] == grid[5]["decay_frr_mean"] - grid[5]["window_frr_mean"]
    with pytest.raises(ValueError, match="rows"):
        study.noise_sweep_values([])
    with pytest.raises(ValueError, match="grid"):
        study.sensitivity_values([])
