"""A fact's timeline: recalls around its eviction, its lowest retention while held, the schedule's bounds."""

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.decay.curves import retention, stability_after_recalls
from forgetting.decay.engines import EbbinghausEngine
from forgetting.studies.decay import study, timeline
from forgetting.studies.decay.sessions import (
    SessionConfig,
    generate_session,
    latest_last_recall,
    recall_schedules,
)
from session_configs import with_recalls

configs = with_recalls(
    st.builds(
        SessionConfig,
        seed=st.just(0),
        session_length=st.integers(1, 120),
        num_foundational=st.integers(1, 3),
        recalls_per_foundational=st.just(0),
        noise_per_turn=st.integers(0, 2),
        schedule=st.sampled_from(["spaced", "uniform"]),
        recall_jitter=st.tuples(st.floats(0.05, 1.0), st.floats(1.0, 3.0)),
    ),
    6,
)
decay_policies = st.builds(study.DecayPolicy, st.floats(0.001, 0.999), st.floats(0.01, 60.0))
policies = st.one_of(decay_policies, st.builds(study.WindowPolicy, st.integers(1, 150)))


def engine_moments(config, policy, fact):
    """Direct reading of the engine: its retention of ``fact`` when each recall reaches it (the
    recall finds it) and at the end of the last turn it is present."""
    engine = EbbinghausEngine(
        eviction_threshold=policy.eviction_threshold, baseline_stability=policy.baseline_stability
    )
    events, index, moments, last = generate_session(config).events, 0, [], None
    for turn in range(1, config.session_length + 1):
        while index < len(events) and events[index][0] == turn:
            _, action, mem_id, foundational = events[index]
            index += 1
            if action == "register":
                engine.register(mem_id, mem_id, turn, foundational)
            elif mem_id == fact and engine.is_present(fact):
                moments.append((turn, engine.retention(fact, turn)))
                engine.recall(mem_id, turn)
            else:
                engine.recall(mem_id, turn)
        engine.step(turn)
        if engine.is_present(fact):
            last = (turn, engine.retention(fact, turn))
    return [*moments, last]


@settings(max_examples=80, deadline=None)
@given(config=configs, policy=decay_policies, seed=st.integers(0, 2**40))
def test_held_moments_are_the_engines_retention_at_each_finding_recall_and_the_last_held_turn(
    config, policy, seed
):
    config = config.replace(seed=seed)
    trace = study.trace_session(policy, config)
    for fact in trace.foundational_ids:
        moments = timeline.held_moments(trace, fact, policy.baseline_stability)
        assert [(m.turn, m.retention) for m in moments] == engine_moments(config, policy, fact)
        for m in moments:
            assert m.stability == stability_after_recalls(m.recalls, policy.baseline_stability)
        assert timeline.lowest_in_trace(trace, fact, policy.baseline_stability).retention == min(
            m.retention for m in moments
        )


@settings(max_examples=60, deadline=None)
@given(config=configs, policy=decay_policies, n_seeds=st.integers(1, 8))
def test_lowest_held_retention_is_the_lowest_moment_of_every_fact_of_every_session(config, policy, n_seeds):
    lowest = timeline.lowest_held_retention(config, n_seeds, policy)
    every = [
        moment
        for seed in range(n_seeds)
        for trace in [study.trace_session(policy, config.replace(seed=seed))]
        for fact in trace.foundational_ids
        for moment in timeline.held_moments(trace, fact, policy.baseline_stability)
    ]
    assert lowest.retention == min(m.retention for m in every)
    assert lowest.retention == retention(
        lowest.elapsed, stability_after_recalls(lowest.recalls, policy.baseline_stability)
    )
    assert any((m.elapsed, m.recalls) == (lowest.elapsed, lowest.recalls) for m in every)


spaced = with_recalls(
    st.builds(
        SessionConfig,
        seed=st.just(0),
        session_length=st.integers(2, 120),
        num_foundational=st.integers(1, 3),
        recalls_per_foundational=st.just(0),
        recall_jitter=st.tuples(st.floats(0.3, 1.0), st.floats(1.0, 1.6)),
        recall_base_offsets=st.lists(st.integers(1, 30), min_size=4, max_size=4).map(tuple),
    ),
    4,
)


@settings(max_examples=60, deadline=None)
@given(config=spaced, policy=decay_policies)
def test_the_schedules_bounds_contain_every_draw_and_the_floor_is_below_every_seed(config, policy):
    bounds = timeline.recall_turn_bounds(config)
    assert len(bounds) <= config.recalls_per_foundational
    if len(bounds) == config.recalls_per_foundational > 0:
        assert bounds[-1][1] == latest_last_recall(config)
    for seed in range(40):
        for turns in recall_schedules(config.replace(seed=seed)):
            assert len(turns) <= len(bounds)
            assert len(turns) == len(bounds) or turns[-1] == config.session_length
            assert all(early <= turn <= late for turn, (early, late) in zip(turns, bounds))
    floor = timeline.held_retention_floor(config, policy.baseline_stability)
    assert floor.retention <= timeline.lowest_held_retention(config, 40, policy).retention


def test_the_floor_is_reached_when_each_gap_can_be_widest():
    """With jitter (1, 1) every seed draws the same schedule, so the floor is what every session reaches."""
    config = SessionConfig(seed=0, recall_jitter=(1.0, 1.0))
    policy = study.DecayPolicy(0.2)
    assert timeline.held_retention_floor(config) == timeline.lowest_held_retention(config, 3, policy)
    touches = [1, *recall_schedules(config)[0], config.session_length]
    gaps = [b - a for a, b in zip(touches, touches[1:])]
    assert timeline.held_retention_floor(config).retention == min(
        retention(gap, stability_after_recalls(k)) for k, gap in enumerate(gaps)
    )


@settings(max_examples=60, deadline=None)
@given(config=configs, window=st.integers(1, 40), seed=st.integers(0, 2**40))
def test_recalls_around_eviction_split_the_recalls_at_the_eviction_turn(config, window, seed):
    config = config.replace(seed=seed)
    traces = {
        p.kind: study.trace_session(p, config) for p in (study.DecayPolicy(), study.WindowPolicy(window))
    }
    trace = traces["window"]
    for fact in trace.foundational_ids:
        split = timeline.recalls_around_eviction(trace, fact)
        found = [(turn, ok) for turn, mem_id, ok in trace.recalls if mem_id == fact]
        assert split.before + split.after == tuple(turn for turn, _ in found)
        assert [ok for _, ok in found] == [True] * len(split.before) + [False] * len(split.after)
        if split.evicted_turn is None:
            assert (
                split.gap is None and not split.after and trace.is_present_after(fact, config.session_length)
            )
        else:
            assert split.gap == window + 1 == split.evicted_turn - split.last_touch
        rows = timeline.recall_rows(traces, fact)
        assert [r["turn"] for r in rows] == [turn for turn, _ in found]
        assert [r["window_found"] for r in rows] == [ok for _, ok in found]


def test_first_after_names_the_missing_recall():
    trace = study.trace_session(study.WindowPolicy(200), SessionConfig(seed=0, num_foundational=1))
    split = timeline.recalls_around_eviction(trace, "foundational_0")
    with pytest.raises(ValueError, match=r"no recall comes after the eviction \(evicted_turn=None"):
        _ = split.first_after
    with pytest.raises(ValueError, match="fact must be an id registered in the trace, got 'nope'"):
        timeline.recalls_around_eviction(trace, "nope")


def test_bad_input_is_refused_with_the_argument_named():
    with pytest.raises(ValueError, match="config.schedule must be 'spaced' for recall bounds, got 'uniform'"):
        timeline.recall_turn_bounds(SessionConfig(seed=0, schedule="uniform"))
    with pytest.raises(ValueError, match="config.num_foundational must be >= 1"):
        timeline.lowest_held_retention(SessionConfig(seed=0, num_foundational=0), 2, study.DecayPolicy())
    with pytest.raises(ValueError, match="n_seeds"):
        timeline.lowest_held_retention(SessionConfig(seed=0), 0, study.DecayPolicy())
    with pytest.raises(ValueError, match="baseline_stability must be a real number > 0"):
        timeline.held_retention_floor(SessionConfig(seed=0), -1.0)
    with pytest.raises(ValueError, match=r"jitter must be a pair \(low, high\) with 0 < low <= 1 <= high"):
        timeline.jitter_text((1.2, 1.3))


def test_jitter_text_reads_the_factor_range_in_percent():
    assert timeline.jitter_text((0.7, 1.3)) == "±30 %"
    assert timeline.jitter_text((0.8, 1.3)) == "−20 % to +30 %"
    assert timeline.jitter_text((1.0, 1.0)) == "±0 %"


@pytest.mark.parametrize("window", [5, 15, 40])
def test_window_zero_causes_agree_with_the_outcomes_and_the_schedule(window):
    config = SessionConfig(seed=0)
    causes = timeline.window_zero_causes(config, 6, window)
    outcomes = study.recall_outcomes(config, 6, study.WindowPolicy(window))
    assert causes["found_first_recall"] == outcomes[0]["found"]
    assert causes["found_last_recall"] == outcomes[config.recalls_per_foundational - 1]["found"]
    assert causes["lost_after_last"] == outcomes[-1]["first_lost"]
    bounds = timeline.recall_turn_bounds(config)
    assert causes["latest_first_recall"] == bounds[0][1]
    if causes["first_recall_certain"]:  # the schedule's guarantee holds on these seeds
        assert causes["found_first_recall"] == 6 * config.num_foundational
    assert causes["certain_loss_below"] == config.session_length - causes["latest_last_recall"]
    assert window < causes["certain_loss_below"] and causes["lost_after_last"] == causes["found_last_recall"]
    low = causes["min_w_full_recall"]
    assert study.summarize_runs(study.run_seeds(study.WindowPolicy(low), config, 6))["frr_mean"] == 1.0
    assert study.summarize_runs(study.run_seeds(study.WindowPolicy(low - 1), config, 6))["frr_mean"] < 1.0
    assert math.isfinite(causes["min_w_footprint"])


@settings(max_examples=40, deadline=None)
@given(config=spaced, policy=decay_policies)
def test_the_floor_is_the_lowest_of_the_bounds_after_each_number_of_recalls(config, policy):
    bounds = timeline.held_retention_bounds(config, policy.baseline_stability)
    assert [b.recalls for b in bounds] == list(range(len(bounds)))
    assert all(b.stability == stability_after_recalls(b.recalls, policy.baseline_stability) for b in bounds)
    floor = timeline.held_retention_floor(config, policy.baseline_stability)
    assert floor in bounds and all(b.no_lower_than(floor) for b in bounds)


def test_held_retention_values_round_the_lowest_and_the_floor():
    config = SessionConfig(seed=0)
    policy = study.DecayPolicy(0.2)
    lowest = timeline.lowest_held_retention(config, 5, policy)
    floor = timeline.held_retention_floor(config)
    values = timeline.held_retention_values(lowest, floor, 0.2)
    assert values["lowest_retention"] == round(lowest.retention, 3)
    assert values["floor_elapsed"] == floor.elapsed and values["floor_stability"] == round(floor.stability, 1)
    assert values["lowest_ratio"] == round(lowest.retention / 0.2, 1)


@pytest.mark.parametrize("window", [5, 15, 40])
def test_window_zero_values_and_what_the_schedule_guarantees(window):
    config = SessionConfig(seed=0)
    causes = timeline.window_zero_causes(config, 6, window)
    n_facts = 6 * config.num_foundational
    values = timeline.window_zero_values(causes, n_facts)
    assert values["n_facts"] == n_facts and values["window_found_last_recall"] == causes["found_last_recall"]
    assert values["min_w_full_recall"] == causes["min_w_full_recall"]
    expected = timeline.window_zero_expected(causes, n_facts, window)
    for key, sure in expected.items():  # what the schedule guarantees holds on these seeds
        assert sure is None or values[key] == sure
    assert (expected["window_lost_after_last"] is None) == (window >= causes["certain_loss_below"])


def test_window_zero_values_name_a_missing_bound():
    causes = dict.fromkeys(
        ["latest_first_recall", "latest_last_recall", "certain_loss_below", "min_w_full_recall"]
    )
    causes.update(found_first_recall=0, found_last_recall=0, lost_after_last=0, first_recall_certain=False)
    causes.update(min_w_footprint=None, min_w_footprint_sd=None)
    values = timeline.window_zero_values(causes, 3)
    assert values["certain_loss_below"] == 0 and values["min_w_footprint"] == 0.0
    assert values["min_w_full_recall"] == "none up to the session length"
    assert timeline.window_zero_expected(causes, 3, 15) == {
        "window_found_first_recall": None,
        "window_lost_after_last": None,
    }


@settings(max_examples=40, deadline=None)
@given(config=configs, window=st.integers(1, 40), seed=st.integers(0, 2**40))
def test_trace_values_and_the_article_checks_read_the_traces(config, window, seed):
    config = config.replace(seed=seed, num_foundational=1)
    policy = study.DecayPolicy()
    traces = {p.kind: study.trace_session(p, config) for p in (policy, study.WindowPolicy(window))}
    fact = traces["decay"].foundational_ids[0]
    split = timeline.recalls_around_eviction(traces["window"], fact)
    if not split.after:
        with pytest.raises(ValueError, match="no recall comes after the eviction"):
            timeline.trace_values(traces, fact, 1, policy)
        return
    values = timeline.trace_values(traces, fact, 1, policy)
    rows = {row["turn"]: row for row in timeline.recall_rows(traces, fact)}
    assert values["late_recall"] == split.first_after and values["window_gap"] == split.gap
    assert values["late_recall_window"] is rows[split.first_after]["window_found"] is False
    assert values["late_recall_decay"] is rows[split.first_after]["decay_found"]
    assert values["early_recalls"] == ", ".join(map(str, split.before))
    lowest = timeline.lowest_in_trace(traces["decay"], fact)
    assert (values["lowest_turn"], values["lowest_elapsed"]) == (lowest.turn, lowest.elapsed)
    checks = {entry: value for _, entry, value in timeline.article_trace_checks(traces, fact)}
    assert checks["recalls_before_eviction"] == len(split.before)
    turns = [
        checks[f"recall_{k}"] for k in range(1, timeline.ARTICLE_TRACE_RECALLS + 1) if f"recall_{k}" in checks
    ]
    assert turns == list(split.before[: timeline.ARTICLE_TRACE_RECALLS])
    assert checks["present_at_end_decay"] == values["present_at_end_decay"]


def test_a_seed_without_a_silent_loss_is_refused_with_seeds_that_have_one():
    from forgetting.studies.decay.policies import WindowPolicy
    from forgetting.studies.decay.sessions import SessionConfig
    from forgetting.studies.decay.study import trace_session

    window = WindowPolicy()
    config = SessionConfig(
        seed=7, session_length=150, num_foundational=1, recalls_per_foundational=4, noise_per_turn=3
    )
    trace = trace_session(window, config)
    with pytest.raises(
        ValueError, match=r"seed must give .* with seed=7 the window drops the fact at turn 50"
    ) as error:
        timeline.require_silent_loss(trace, trace.foundational_ids[0], config, window)
    seeds = timeline.silent_loss_seeds(config, window)
    assert 0 in seeds and 7 not in seeds and str(seeds) in str(error.value)
    for seed in seeds:  # each named seed is one the chapter can tell
        ok = dataclasses.replace(config, seed=seed)
        trace = trace_session(window, ok)
        timeline.require_silent_loss(trace, trace.foundational_ids[0], ok, window)
