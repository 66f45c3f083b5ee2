"""Capacity-limited forgetting: LRU, FIFO, LFU and seeded random eviction never hold more than C."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversation_streams import stream, streams
from forgetting.conversations.capacity import RANDOM_DRAW_BLOCK, Capacity, RandomEviction
from forgetting.conversations.policies import replay

VICTIM_KEYS = {  # of (store, last, recalls): the victim has the smallest
    "lru": lambda touch: (touch[1], touch[0]),  # least recently touched, then earliest stored
    "fifo": lambda touch: touch[0],  # earliest stored
    "lfu": lambda touch: (touch[2], touch[0]),  # fewest recalls, then earliest stored
}


def touches(events, result):
    """For each event that evicts: the victim and, for every memory held just before, (store, last, recalls)."""
    state, evictions = {}, []  # id -> [store, last, recalls]
    for event in events:
        for mem_id in event.recalled:
            if mem_id in state:
                state[mem_id][1] = event.turn
                state[mem_id][2] += 1
        victims = [m for m, t in result.dropped.items() if t == event.turn]
        if victims:
            evictions.append((victims, {m: tuple(v) for m, v in state.items()}))
            for mem_id in victims:
                del state[mem_id]
        state[event.stored] = [event.turn, event.turn, 0]
    return evictions


@settings(max_examples=80, deadline=None)
@given(streams(), st.integers(1, 6), st.sampled_from(["lru", "fifo", "lfu", "random"]))
def test_a_capacity_policy_never_holds_more_than_c_and_evicts_one_memory_only_when_full(
    events, capacity, rule
):
    policy = (
        RandomEviction(capacity=capacity, seed=11)
        if rule == "random"
        else Capacity(capacity=capacity, rule=rule)
    )
    result = replay(policy, events)
    assert result.held_counts == tuple(min(i + 1, capacity) for i in range(len(events)))
    assert result.held[-1] == events[-1].stored  # the incoming memory is always stored
    for victims, held in touches(events, result):
        assert len(victims) == 1 and len(held) == capacity
        victim = victims[0]
        if rule != "random":
            key = VICTIM_KEYS[rule]
            assert all(key(held[victim]) < key(held[other]) for other in held if other != victim)


def test_lru_fifo_and_lfu_choose_different_victims_on_a_hand_made_stream():
    # a, b, c stored; a recalled twice, b once, at turns 3 and 4; then d needs room
    events = stream([0] * 5, {3: [0, 1], 4: [0]})
    assert replay(Capacity(capacity=4, rule="lru"), events).dropped == {
        "m2": 4
    }  # c: touched at 2, a and b later
    assert replay(Capacity(capacity=4, rule="fifo"), events).dropped == {"m0": 4}
    assert replay(Capacity(capacity=4, rule="lfu"), events).dropped == {"m2": 4}
    ties = stream([0] * 4, {2: [1]})  # a, b stored; b recalled; c stored; d: a and c tie on LFU, a first
    assert replay(Capacity(capacity=3, rule="lfu"), ties).dropped == {"m0": 3}
    assert replay(Capacity(capacity=3, rule="lru"), ties).dropped == {"m0": 3}
    assert replay(Capacity(capacity=2, rule="lru"), ties).dropped == {
        "m0": 2,
        "m1": 3,
    }  # b recalled, c stored, both at 2: b


@settings(max_examples=40, deadline=None)
@given(streams(), st.integers(1, 5), st.integers(0, 2**32))
def test_random_eviction_is_a_draw_per_event_by_seed_whatever_the_recalls(events, capacity, seed):
    result = replay(RandomEviction(capacity=capacity, seed=seed), events)
    assert replay(RandomEviction(capacity=capacity, seed=seed), events) == result
    without_recalls = [event._replace(recalled=()) for event in events]
    assert replay(RandomEviction(capacity=capacity, seed=seed), without_recalls).dropped == result.dropped
    assert (result.dropped, list(result.held)) == direct_random_eviction(events, capacity, seed)


def direct_random_eviction(events, capacity, seed):
    """The docstring read directly: one ``rng.integers(C)`` call per event, the ``j``-th held evicted when full."""
    rng = np.random.default_rng(seed)
    held, dropped = [], {}
    for event in events:
        draw = int(rng.integers(capacity))
        if len(held) == capacity:
            dropped[held.pop(draw)] = event.turn
        held.append(event.stored)
    return dropped, held


@pytest.mark.parametrize("capacity", [1, 2, 7, 300])
def test_random_eviction_drawing_in_blocks_draws_what_one_call_per_event_would(capacity):
    events = stream([0] * (2 * RANDOM_DRAW_BLOCK + 3))  # past two blocks of draws
    result = replay(RandomEviction(capacity=capacity, seed=5), events)
    assert (result.dropped, list(result.held)) == direct_random_eviction(events, capacity, 5)


def test_random_eviction_depends_on_the_seed():
    events = stream([0] * 30)
    results = {
        tuple(sorted(replay(RandomEviction(capacity=5, seed=seed), events).held)) for seed in range(10)
    }
    assert len(results) > 1


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Capacity(capacity=0), r"capacity must be an int >= 1, got 0"),
        (lambda: Capacity(capacity=2.0), r"capacity must be an int >= 1, got 2.0"),
        (lambda: Capacity(capacity=True), r"capacity must be an int >= 1, got True"),
        (lambda: Capacity(capacity=3, rule="mru"), r"rule must be one of 'lru', 'fifo', 'lfu', got 'mru'"),
        (lambda: Capacity(capacity=3, rule=None), r"rule must be one of 'lru', 'fifo', 'lfu', got None"),
        (lambda: RandomEviction(capacity=0, seed=1), r"capacity must be an int >= 1, got 0"),
        (lambda: RandomEviction(capacity=3, seed=-1), r"seed must be an int >= 0, got -1"),
        (lambda: RandomEviction(capacity=3, seed="1"), r"seed must be an int >= 0, got '1'"),
        (
            lambda: RandomEviction(capacity="3", seed=1.5),
            r"capacity must be an int >= 1, got '3'; seed must be an int >= 0, got 1.5",
        ),
    ],
)
def test_bad_parameters_are_refused_with_the_argument_the_value_and_what_is_allowed(make, message):
    with pytest.raises(ValueError, match=message):
        make()
