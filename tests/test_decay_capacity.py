"""The engines with a budget: a direct reading of the victim rule, the bound, the uncapped limit, bad input."""

from __future__ import annotations

import math
from datetime import datetime
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.conversations.capacity import Capacity, CapacityRule
from forgetting.conversations.policies import Event, ReplayRun
from forgetting.decay.curves import decay_eviction_delay, reinforced_stability
from forgetting.decay.engines import EbbinghausEngine, RecencyWindow
from forgetting.studies.decay.capacity import CapacityDecay, CapacityWindow, age_ratio, victim_key
from forgetting.studies.decay.sessions import SessionConfig, generate_session
from forgetting.studies.decay.simulation import simulate


class Reference:
    """The rule read directly: scan every present item, compare ``t / S`` as exact fractions."""

    def __init__(self, capacity, by_retention, time_rule, oldest_first):
        self.capacity, self.by_retention, self.time_rule, self.oldest_first = (
            capacity,
            by_retention,
            time_rule,
            oldest_first,
        )
        self.items = {}  # id -> [sequence, last, count, stability]
        self.sequence = 0
        self.evicted = []

    def register(self, mem_id, turn):
        if len(self.items) == self.capacity:

            def age(entry):
                t = Fraction(turn - entry[1])
                return t / Fraction(entry[3]) if self.by_retention else t

            # largest age; among equal ages the lowest (oldest_first) or highest sequence
            victim = max(
                self.items,
                key=lambda m: (
                    age(self.items[m]),
                    -self.items[m][0] if self.oldest_first else self.items[m][0],
                ),
            )
            del self.items[victim]
            self.evicted.append(victim)
        self.items[mem_id] = [self.sequence, turn, 1, 8.0 if self.by_retention else math.inf]
        self.sequence += 1

    def recall(self, mem_id, turn):
        entry = self.items.get(mem_id)
        if entry is None:
            return False
        entry[1], entry[2] = turn, entry[2] + 1
        if self.by_retention:
            entry[3] = reinforced_stability(entry[3], entry[2])
        return True

    def step(self, turn):
        due = []
        for mem_id, (sequence, last, _, stability) in self.items.items():
            if self.time_rule is None:
                continue
            delay = (
                decay_eviction_delay(stability, self.time_rule) if self.by_retention else self.time_rule + 1
            )
            if delay is not None and turn - last >= delay:
                due.append((sequence, mem_id))
        for _, mem_id in due:
            del self.items[mem_id]
        out = sorted(due + [(0, m) for m in self.evicted])  # compared as sets below
        self.evicted = []
        return {m for _, m in out}


events = st.lists(st.tuples(st.integers(0, 2), st.booleans(), st.integers(0, 11)), min_size=1, max_size=80)


@settings(max_examples=150, deadline=None)
@given(
    events=events,
    capacity=st.integers(1, 6),
    by_retention=st.booleans(),
    timed=st.booleans(),
    oldest_first=st.booleans(),
)
def test_the_engines_evict_what_a_scan_of_the_rule_evicts(
    events, capacity, by_retention, timed, oldest_first
):
    time_rule = (0.3 if by_retention else 4) if timed else None
    if by_retention:
        engine = CapacityDecay(capacity, time_rule, oldest_first=oldest_first)
    else:
        engine = CapacityWindow(capacity, time_rule, oldest_first=oldest_first)
    reference = Reference(capacity, by_retention, time_rule, oldest_first)
    turn, fresh = 1, 0
    for gap, is_register, which in events:
        if gap:
            for t in range(turn, turn + gap):
                assert set(engine.step(t)) == reference.step(t), t
            turn += gap
        if is_register:
            engine.register(f"m{fresh}", "", turn)
            reference.register(f"m{fresh}", turn)
            fresh += 1
        else:
            assert engine.recall(f"m{which}", turn) == reference.recall(f"m{which}", turn)
        assert engine.working_set_size() <= capacity
        assert sorted(engine.present_ids()) == sorted(reference.items)
    assert set(engine.step(turn)) == reference.step(turn)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), noise=st.integers(0, 8), capacity=st.integers(1, 60))
def test_a_session_never_holds_more_than_the_budget(seed, noise, capacity):
    session = generate_session(SessionConfig(seed=seed, noise_per_turn=noise))
    for engine in (
        CapacityDecay(capacity),
        CapacityWindow(capacity),
        CapacityDecay(capacity, 0.2),
        CapacityWindow(capacity, 15),
    ):
        trace = simulate(engine, session)
        assert max(trace.working_set_sizes) <= capacity
        # an item leaves once, at the turn it was evicted, and is absent after
        assert all(not trace.is_present_after(m, t) for m, t in trace.evicted_turn.items())


@pytest.mark.parametrize("seed", [0, 7, 42])
@pytest.mark.parametrize("noise", [0, 3, 20])
def test_a_budget_that_never_binds_decides_as_the_uncapped_engine(seed, noise):
    session = generate_session(SessionConfig(seed=seed, noise_per_turn=noise))
    big = 10 * len(session.events)
    for capped, plain in (
        (CapacityDecay(big, 0.2), EbbinghausEngine(eviction_threshold=0.2, baseline_stability=8.0)),
        (CapacityWindow(big, 15), RecencyWindow(window_size=15)),
    ):
        a, b = simulate(capped, session), simulate(plain, session)
        assert a.evicted_turn == b.evicted_turn and a.working_set_sizes == b.working_set_sizes


def test_noise_pushes_a_fact_out_once_the_budget_binds():
    """The arriving noise items of a busier session evict what a quieter one keeps."""
    quiet = simulate(CapacityDecay(32), generate_session(SessionConfig(seed=0, noise_per_turn=1)))
    busy = simulate(CapacityDecay(32), generate_session(SessionConfig(seed=0, noise_per_turn=20)))
    facts = quiet.foundational_ids
    assert quiet.foundational_present[-1] == len(facts) and busy.foundational_present[-1] < len(facts)


def test_ties_go_to_the_oldest_or_the_newest_and_the_incoming_item_stays():
    for oldest_first, victim in ((True, "a"), (False, "b")):
        engine = CapacityDecay(2, oldest_first=oldest_first)
        for mem_id in ("a", "b", "c"):
            engine.register(mem_id, "", 1)
        assert engine.step(1) == [victim] and engine.is_present("c")


@settings(max_examples=200)
@given(
    age=st.integers(0, 10**6),
    stability=st.floats(min_value=1e-300, max_value=1e300) | st.just(math.inf),
    by_retention=st.booleans(),
)
def test_the_age_ratio_is_t_over_s_exactly_or_t_for_the_window(age, stability, by_retention):
    num, den = age_ratio(age, stability, by_retention)
    if not by_retention:
        assert (num, den) == (age, 1)
    else:
        exact = Fraction(0) if stability == math.inf else Fraction(age) / Fraction(stability)
        assert den > 0 and Fraction(num, den) == exact


def test_the_victim_key_orders_by_exact_ratio_then_by_sequence():
    engine = CapacityDecay(5)
    engine.register("old", "", 1)
    engine.register("new", "", 1)
    engine.recall("new", 1)
    old, new = engine.item("old"), engine.item("new")
    assert victim_key(old, 5, True, True) == (-Fraction(4) / Fraction(8.0), 0)
    assert victim_key(old, 5, True, True) < victim_key(new, 5, True, True)  # lower retention first
    assert victim_key(old, 5, False, False) == (-4, 0) and victim_key(new, 5, False, False) == (-4, -1)


def test_the_evicted_item_is_reported_once_and_recalled_as_missing():
    engine = CapacityWindow(1)
    engine.register("a", "", 1)
    engine.register("b", "", 2)
    assert not engine.is_present("a") and engine.recall("a", 2) is False
    assert engine.step(2) == ["a"] and engine.step(3) == []


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: CapacityDecay(0), "capacity must be"),
        (lambda: CapacityDecay(2.0), "capacity must be"),
        (lambda: CapacityDecay(True), "capacity must be"),
        (lambda: CapacityDecay(3, 1.5), "eviction_threshold"),
        (lambda: CapacityDecay(3, None, -1.0), "baseline_stability"),
        (lambda: CapacityDecay(3, oldest_first="yes"), "oldest_first"),
        (lambda: CapacityWindow(0), "capacity must be"),
        (lambda: CapacityWindow(3, 0), "window_size"),
        (lambda: CapacityWindow(3, oldest_first=1), "oldest_first"),
    ],
)
def test_bad_settings_are_refused_with_the_argument_named(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_a_refused_register_changes_nothing():
    engine = CapacityDecay(1)
    engine.register("a", "", 3)
    with pytest.raises(ValueError, match="turn must not go backwards"):
        engine.register("b", "", 2)
    with pytest.raises(ValueError, match="already registered"):
        engine.register("a", "", 3)
    assert engine.present_ids() == ["a"] and engine.step(3) == []


@settings(max_examples=80, deadline=None)
@given(capacity=st.integers(1, 6), length=st.integers(1, 40), data=st.data())
def test_the_window_with_the_budget_alone_is_the_library_s_lru_rule(capacity, length, data):
    # One concept, two forms: CapacityWindow(C) is an engine for the article's driver, the
    # library's Capacity(C, "lru") a policy of its driver. Driven by the same library events (one
    # store per turn, the driver's order: forget, recall, store), they hold the same memories.
    events = []
    for t in range(length):
        recalled = data.draw(st.lists(st.integers(0, t - 1), unique=True, max_size=3)) if t else []
        events.append(Event(t, datetime(2024, 1, 1), 1, t, tuple(recalled)))
    run = ReplayRun(Capacity(capacity=capacity, rule=CapacityRule.LRU))
    engine = CapacityWindow(capacity)
    for event in events:
        engine.step(event.turn)
        for mem_id in event.recalled:
            engine.recall(mem_id, event.turn)  # a missing id: a missed recall, as the library's
        engine.register(event.stored, turn=event.turn)
        run.feed([event])
        assert engine.present_ids() == list(run.held)
    assert len(run.dropped) == max(0, length - capacity)  # the budget binds: the test can fail
