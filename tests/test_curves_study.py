"""The curve comparison: matched grace periods leave every decision unchanged; the frontier does not."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.studies.curves.study import (
    PowerPolicy,
    curve_frontier,
    curve_headline,
    curve_noise_sweep,
    differing_sessions,
    equivalent_exponential,
    fact_fates,
    relabelling_check,
    run_curve_seeds,
)
from forgetting.studies.decay.sessions import SessionConfig
from forgetting.studies.decay.study import DECAY, DecayPolicy

CONFIG = SessionConfig(
    seed=0, session_length=150, num_foundational=3, recalls_per_foundational=4, noise_per_turn=3
)


@pytest.mark.parametrize("decay", [0.1542, 0.5, 1.0])
def test_matched_power_law_changes_no_session(decay):
    assert differing_sessions(CONFIG, 10, DECAY, PowerPolicy(decay)) == []


def test_headline_at_published_parameters():
    """Exact reproduction: the article's headline (FRR 1.000, footprint 0.911) under both curves."""
    rows = curve_headline(CONFIG, 50, [0.5])
    assert [row["curve"] for row in rows] == ["exponential", "power"]
    for row in rows:
        assert row["frr_mean"] == 1.0 and row["frr_sd"] == 0.0
        assert round(row["footprint_reduction_mean"], 3) == 0.911
        assert row["grace_turns"] == 13


def test_noise_sweep_is_the_same_for_both_curves():
    rows = curve_noise_sweep(CONFIG, [1, 10], 3, [0.3])
    by_noise = {}
    for row in rows:
        by_noise.setdefault(row["noise_per_turn"], set()).add(row["frr_mean"])
    assert all(len(values) == 1 for values in by_noise.values())


def test_frontier_away_from_the_match_differs():
    rows = curve_frontier(CONFIG, 3, [0.05, 0.5], [0.5])
    grace = {(r["threshold"], r["curve"]): r["grace_turns"] for r in rows}
    assert grace[(0.05, "power")] > grace[(0.05, "exponential")]
    assert grace[(0.5, "power")] < grace[(0.5, "exponential")]
    assert differing_sessions(CONFIG, 3, DecayPolicy(0.5), PowerPolicy(0.5, 0.5))


def test_fact_fates_name_each_policy():
    policies = [DecayPolicy(0.5), PowerPolicy(0.5, 0.5)]
    fates = fact_fates(CONFIG, policies)
    assert len(fates) == 3 and all(p.label in fates[0] for p in policies)
    assert fates[0][policies[0].label] is None and fates[0][policies[1].label] is not None


def test_seeds_must_be_positive():
    with pytest.raises(ValueError, match="n_seeds must be an int >= 1"):
        run_curve_seeds(DECAY, CONFIG, 0)


@pytest.mark.parametrize("threshold, decay", [(0.1, 0.2), (0.1, 0.5), (0.5, 0.5), (0.8, 1.0), (0.3, 0.3)])
def test_every_power_engine_is_an_exponential_engine_at_another_threshold(threshold, decay):
    power = PowerPolicy(decay, threshold)
    exponential = equivalent_exponential(power)
    assert exponential.grace_turns == power.grace_turns
    assert differing_sessions(CONFIG, 3, exponential, power) == []


def test_an_underflowing_equivalent_is_refused():
    with pytest.raises(ValueError, match="underflows to 0"):
        equivalent_exponential(PowerPolicy(0.1542, 0.05))


def test_relabelling_check_simulates_where_it_can():
    rows = relabelling_check(CONFIG, 2, [0.05, 0.5], [0.1542, 1.0])
    assert [row["sessions_differing"] for row in rows] == [None, 0, 0, 0]
    assert rows[0]["equivalent_threshold"] is None and rows[1]["equivalent_threshold"] > 0


def test_matched_differing_count_sums_differing_sessions_over_decays():
    from forgetting.studies.curves.study import matched_differing_count

    assert matched_differing_count(CONFIG, 3, [0.5, 1.0], 0.2, 8.0) == 0  # matched at theta: nothing moves
    # matched at 0.2 but compared at 0.5 the tails part: the count is the per-decay rows summed
    exp, power = DecayPolicy(0.5, 8.0), PowerPolicy(0.5, 0.5, 0.2, 8.0)
    assert len(differing_sessions(CONFIG, 5, exp, power)) > 0


def test_headline_pair_and_noise_gap_read_the_tables():
    from forgetting.studies.curves.study import headline_pair, noise_max_frr_gap

    rows = [
        {"curve": "exponential", "decay": float("nan"), "frr_mean": 0.5},
        {"curve": "power", "decay": 0.5, "frr_mean": 0.7},
        {"curve": "power", "decay": 1.0, "frr_mean": 0.2},
    ]
    assert headline_pair(rows, 0.5) == (rows[0], rows[1])
    with pytest.raises(ValueError, match="one power row at decay 0.3"):
        headline_pair(rows, 0.3)
    noise = [{**row, "noise_per_turn": level} for level in (1, 5) for row in rows]
    noise[3] = {**noise[3], "frr_mean": 0.45}  # the exponential at noise 5
    assert noise_max_frr_gap(noise) == pytest.approx(0.3)  # |0.2 - 0.5| at noise 1
    with pytest.raises(ValueError, match="power-law rows"):
        noise_max_frr_gap(noise[:1])


def test_grace_at_and_relabelling_summary():
    from forgetting.studies.curves.study import grace_at, relabelling_summary

    frontier = curve_frontier(CONFIG.replace(session_length=40), 1, [0.1, 0.5], [0.5])
    exp_grace, power_grace = grace_at(frontier, 0.1, 0.5)
    assert exp_grace == DecayPolicy(0.1).grace_turns and power_grace == PowerPolicy(0.5, 0.1, 0.2).grace_turns
    rows = [{"sessions_differing": 0}, {"sessions_differing": None}, {"sessions_differing": 2}]
    assert relabelling_summary(rows) == {"simulated": 2, "underflow": 1, "sessions_differing": 2}


@settings(max_examples=40, deadline=None)
@given(
    decay=st.sampled_from([0.1542, 0.3, 0.5, 1.0, 2.0]),
    threshold=st.sampled_from([0.05, 0.2, 0.5, 0.8]),
    noise=st.integers(0, 5),
    schedule=st.sampled_from(["spaced", "uniform"]),
    recalls=st.integers(0, 4),
    exponential=st.booleans(),
)
def test_the_batch_rows_are_the_event_engines_session_by_session(
    decay, threshold, noise, schedule, recalls, exponential
):
    """run_curve_seeds (the batch simulator, on each policy's eviction delays) against a direct
    replay of every event through the policy's own engine."""
    from forgetting.studies.decay import metrics
    from forgetting.studies.decay.sessions import generate_session
    from forgetting.studies.decay.simulation import simulate

    config = SessionConfig(seed=0, session_length=80, noise_per_turn=noise, schedule=schedule,
                           recalls_per_foundational=recalls)  # fmt: skip
    policy = DecayPolicy(threshold) if exponential else PowerPolicy(decay, threshold)
    direct = [
        {
            "seed": s,
            **metrics.session_summary(simulate(policy.engine(), generate_session(config.replace(seed=s)))),
        }
        for s in range(6)
    ]
    assert run_curve_seeds(policy, config, 6) == direct


@settings(max_examples=30, deadline=None)
@given(
    decays=st.tuples(st.sampled_from([0.1542, 0.5, 1.0]), st.sampled_from([0.3, 2.0])),
    thresholds=st.tuples(st.sampled_from([0.1, 0.2, 0.5]), st.sampled_from([0.05, 0.2, 0.6])),
    noise=st.integers(0, 4),
    exponential=st.booleans(),
)
def test_differing_sessions_are_those_whose_event_traces_differ(decays, thresholds, noise, exponential):
    """A direct reading: every event through both engines, the (item, eviction turn) pairs compared."""
    from forgetting.studies.decay import metrics
    from forgetting.studies.decay.sessions import generate_session
    from forgetting.studies.decay.simulation import simulate

    config = SessionConfig(seed=0, session_length=80, noise_per_turn=noise)
    first = DecayPolicy(thresholds[0]) if exponential else PowerPolicy(decays[0], thresholds[0])
    second = PowerPolicy(decays[1], thresholds[1])
    direct = []
    for seed in range(8):
        session = generate_session(config.replace(seed=seed))
        a, b = simulate(first.engine(), session), simulate(second.engine(), session)
        moved = sum(
            a.evicted_turn.get(i) != b.evicted_turn.get(i) for i in set(a.evicted_turn) | set(b.evicted_turn)
        )
        if moved:
            direct.append(
                {"seed": seed, "items_evicted_at_other_turns": moved,
                 "first_terminal_frr": metrics.terminal_frr(a), "second_terminal_frr": metrics.terminal_frr(b),
                 "first_footprint_reduction": metrics.footprint_reduction(a),
                 "second_footprint_reduction": metrics.footprint_reduction(b)}
            )  # fmt: skip
    assert differing_sessions(config, 8, first, second) == direct
