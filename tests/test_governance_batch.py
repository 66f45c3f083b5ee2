"""The batched governance loop against the session-by-session one: the same runs, field for field."""

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from forgetting import governance
from forgetting.decay import EbbinghausEngine
from forgetting.governance.batch import (
    _crowded,
    _interval_harmful,
    _Test,
    _whole_readings,
    delay_table,
    play_batch,
    play_seeds,
    run_governance_seeds,
)
from forgetting.governance.policies import _read_worth, run_governance
from forgetting.governance.world import crowded_out
from forgetting.worth import LOW_VALUE, MemoryWorth
from forgetting.worth.evidence import HarmTest, _harmful

probabilities = st.sampled_from([0.0, 0.05, 0.2, 0.25, 0.5, 0.9, 1.0])


@st.composite
def worlds(draw):
    length = draw(st.integers(3, 60))
    outcome = governance.GovernanceOutcome(*(draw(probabilities) for _ in range(4)))
    return governance.GovernanceWorld(
        session_length=length,
        shift_turn=draw(st.integers(2, length - 1)),
        task_rate=draw(st.sampled_from([0.0, 0.5, 0.8, 1.0])),
        co_retrieval=draw(st.sampled_from([0.0, 0.25, 0.5, 1.0])),
        noise_per_turn=draw(st.integers(0, 3)),
        first_gap=draw(st.integers(1, 3)),
        outcome=outcome,
        crowding=draw(st.sampled_from([0.0, 0.01, 0.3])),
        confound=draw(st.sampled_from([0.0, 0.5, 1.0])),
        difficulty=draw(st.sampled_from([0.0, 0.5, 1.0])),
    )


rules = st.tuples(
    st.sampled_from([0.05, 0.2, 0.6]),  # eviction threshold
    st.sampled_from([1.0, 2.0, 5.0]),  # min evidence
    st.sampled_from([0.0, 0.3, 0.6]),  # low threshold
    st.sampled_from([1.0, 0.9, 0.5, 1e-30]),  # discount; 1e-30 rescales the store within a session
    st.sampled_from([0.0, 1.0, 2.576]),  # effect z
    st.sampled_from([0.01, 2 / 3, 0.5]),  # alpha; 2/3 puts the mixture 1.5 on its boundary
)


@settings(max_examples=60, deadline=None)
@given(worlds(), rules, st.integers(0, 10_000), st.sampled_from(governance.ALL_POLICIES))
def test_the_batch_plays_every_session_as_the_scalar_loop_does(world, rule, first_seed, policy):
    sessions = [governance.generate_governance_session(world, first_seed + i) for i in range(12)]
    assert play_batch(sessions, policy, rule) == [run_governance(s, policy, *rule) for s in sessions]


def test_the_chapters_world_gives_the_same_runs_batched_and_one_by_one():
    world = governance.GovernanceWorld(crowding=0.01, confound=0.5, difficulty=0.5)
    sessions = [governance.generate_governance_session(world, seed) for seed in range(40)]
    rule = (0.2, 5.0, 0.3, 1.0, 2.576, 0.01)
    for policy in governance.ALL_POLICIES:
        assert play_batch(sessions, policy, rule) == [run_governance(s, policy, *rule) for s in sessions]


def test_run_governance_seeds_gives_the_runs_of_run_governance():
    world = governance.GovernanceWorld(session_length=80)
    runs = run_governance_seeds(world, 7, 3, policies=governance.ALL_POLICIES, discount=0.9)
    for policy in governance.ALL_POLICIES:
        one_by_one = [
            run_governance(governance.generate_governance_session(world, s), policy, discount=0.9)
            for s in range(3, 10)
        ]
        assert runs[policy] == one_by_one


def test_play_seeds_plays_each_policy_as_play_batch_does_on_the_seeds_sessions():
    world = governance.GovernanceWorld(session_length=90, crowding=0.01, confound=0.5, difficulty=0.5)
    seeds = [3, 11, 4]
    sessions = [governance.generate_governance_session(world, seed) for seed in seeds]
    rule = (0.2, 5.0, 0.3, 0.9, 2.576, 0.01)
    by_policy = [play_batch(sessions, policy, rule) for policy in governance.ALL_POLICIES]
    assert play_seeds(world, seeds, governance.ALL_POLICIES, rule) == [list(runs) for runs in zip(*by_policy)]


@given(st.integers(0, 25), st.sampled_from([1.0, 2.0, 5.0]), st.sampled_from([0.0, 0.3, 0.6]))
def test_whole_counter_readings_are_memory_worths_own(bound, min_evidence, low_threshold):
    worth = MemoryWorth(min_evidence=min_evidence, low_threshold=low_threshold)
    reading = (worth.prior, worth.min_evidence, worth.high_threshold, worth.low_threshold)
    rates, lows = _whole_readings(bound, reading)
    for positive in range(bound + 1):
        for negative in range(bound + 1):
            rate, kind = _read_worth((float(positive), float(negative)), *reading)
            key = positive * (bound + 1) + negative
            assert (float(rates[key]), bool(lows[key])) == (rate, kind == LOW_VALUE)


def test_the_delay_table_is_the_engines_own():
    table = delay_table(0.2, 12)
    for n in range(1, 13):  # registered at turn 1, recalled at turns 2 .. n: touch count n, last touch n
        engine = EbbinghausEngine(0.2)
        engine.register("m", "fact", 1)
        for turn in range(2, n + 1):
            engine.recall("m", turn)
        last = max(n, 1)
        assert engine.item("m").touch_count == n
        assert engine.step(last + int(table[n]) - 1) == [] and engine.step(last + int(table[n])) == ["m"]


@given(st.integers(1, 50), st.floats(0.001, 10.0))
def test_crowding_near_its_boundary_is_decided_as_the_scalar_rule_decides(noise, crowding):
    edge = 1.0 / (1.0 + crowding * noise)
    draws = np.array([np.nextafter(edge, 0), edge, np.nextafter(edge, 1), 0.0, 0.999999])
    assert _crowded(draws, crowding, noise).tolist() == [
        crowded_out(float(d), crowding, noise) for d in draws
    ]


def test_the_interval_is_decided_as_the_scalar_rule_decides_on_every_small_count():
    counts = np.array(
        [
            (n1, k1, n0, k0)
            for n1 in range(7)
            for k1 in range(n1 + 1)
            for n0 in range(7)
            for k0 in range(n0 + 1)
        ]
    ).T
    for z in (0.0, 1.0, 1.96, 2.576):
        batch = _interval_harmful(np.ones(counts.shape[1], dtype=bool), *counts, z)
        assert batch.tolist() == [_harmful(*map(int, c), z) for c in counts.T]


@given(
    st.lists(st.tuples(st.booleans(), st.booleans()), max_size=40),
    st.sampled_from([0.0, 0.3, 0.5, 0.9]),
    st.sampled_from([0.01, 0.1, 2 / 3]),
)
@example([(True, False)], 0.0, 2 / 3)  # the mixture exactly 1.5 = 1 / alpha in floats: the exact path
def test_the_sequential_test_decides_as_harm_test_does(tasks, co_retrieval, alpha):
    scalar, batch = HarmTest(co_retrieval, alpha), _Test(1, co_retrieval, alpha)
    for retrieved, success in tasks:
        scalar.add(retrieved, success)
        found = batch.add_and_check(np.array([True]), np.array([retrieved]), np.array([success]))
        assert bool(found[0]) == scalar.harmful()
        assert [float(p[0]) for p in batch.products] == scalar.products


@pytest.mark.parametrize("alpha", [2 / 3, float(np.nextafter(2 / 3, 1))])
def test_a_mixture_at_its_boundary_is_decided_as_harm_test_decides(alpha):
    # one contrast task that retrieved the fact and failed, at q = 1/2: the products are 1.25,
    # 1.5 and 1.75, the mixture 1.5, and alpha * 4.5 lies within the margin of 3: the exact path
    assert abs(alpha * 4.5 - 3.0) <= 1e-9 * 3.0
    scalar, batch = HarmTest(0.0, alpha), _Test(1, 0.0, alpha)
    scalar.add(True, False)
    found = batch.add_and_check(np.array([True]), np.array([True]), np.array([False]))
    assert bool(found[0]) == scalar.harmful() == (Fraction(alpha) * Fraction(3, 2) >= 1)


@pytest.mark.parametrize(
    ("sessions", "policy", "message"),
    [
        ("two worlds", "decay", "one world"),
        ("one", "nope", "policy must be one of"),
    ],
)
def test_bad_input_is_refused_with_what_is_allowed(sessions, policy, message):
    world = governance.GovernanceWorld(session_length=20, shift_turn=8)
    first = governance.generate_governance_session(world, 0)
    chosen = (
        [first]
        if sessions == "one"
        else [first, governance.generate_governance_session(replace(world, task_rate=0.5), 1)]
    )
    with pytest.raises(ValueError, match=message):
        play_batch(chosen, policy, (0.2, 5.0, 0.3, 1.0, 2.576, 0.01))


def test_no_sessions_give_no_runs():
    assert play_batch([], "decay", (0.2, 5.0, 0.3, 1.0, 2.576, 0.01)) == []
