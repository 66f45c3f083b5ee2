"""The session generator follows its stated rules."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.studies.decay import sessions
from forgetting.studies.decay.sessions import (
    RECALL_BASE_OFFSETS,
    SessionConfig,
    generate_session,
    latest_last_recall,
    max_recalls,
)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    length=st.integers(1, 400),
    facts=st.integers(0, 4),
    recalls=st.integers(0, 6),
    noise=st.integers(0, 3),
)
def test_spaced_schedule_matches_rules(seed, length, facts, recalls, noise):
    config = SessionConfig(
        seed=seed,
        session_length=length,
        num_foundational=facts,
        recalls_per_foundational=0,
        noise_per_turn=noise,
    )
    recalls = min(recalls, max_recalls(config))  # more could never be honoured: refused
    config = config.replace(recalls_per_foundational=recalls)
    session = generate_session(config)
    rng = random.Random(seed)  # the rules, read directly
    for fid in session.foundational_ids:
        expected, previous = [], 1
        for offset in RECALL_BASE_OFFSETS[:recalls]:
            turn = max(previous + 1, min(1 + round(offset * rng.uniform(0.7, 1.3)), length))
            if turn > length:
                break
            expected.append(turn)
            previous = turn
        assert session.recall_turns(fid) == expected
    turns = [e[0] for e in session.events]
    assert turns == sorted(turns) and all(1 <= t <= length for t in turns)
    noise_events = [e for e in session.events if e[2].startswith("noise")]
    assert len(noise_events) == noise * length and not any(e[3] for e in noise_events)
    assert [e for e in session.events if e[1] == "register" and e[3]] == [
        (1, "register", fid, True) for fid in session.foundational_ids
    ]


def test_uniform_schedule_draws_distinct_turns_in_range():
    session = generate_session(SessionConfig(seed=3, schedule="uniform", uniform_range=(10, 150)))
    for fid in session.foundational_ids:
        turns = session.recall_turns(fid)
        assert len(turns) == 4 == len(set(turns)) and all(10 <= t <= 150 for t in turns)


@pytest.mark.parametrize(
    "changes, name",
    [
        ({"session_length": 0}, "session_length"),
        ({"noise_per_turn": -1}, "noise_per_turn"),
        ({"num_foundational": 1.5}, "num_foundational"),
        ({"schedule": "random"}, "schedule"),
        ({"recall_jitter": (1.3, 0.7)}, "recall_jitter"),
        ({"recall_base_offsets": ()}, "recall_base_offsets"),
        ({"seed": "0"}, "seed"),
        ({"uniform_range": (0, 10)}, "uniform_range"),
        ({"uniform_range": (1, 10)}, r"uniform_range .*2 <= first <= last \(a fact is registered at turn 1"),
    ],
)
def test_bad_session_parameters(changes, name):
    with pytest.raises(ValueError, match=name):
        SessionConfig.from_dict({"seed": 0, **changes})


@pytest.mark.parametrize(
    "changes, message",
    [
        (
            {"session_length": 10**12, "noise_per_turn": 0},
            r"session_length must be <= 10000000, got 1000000000000",
        ),
        (
            {"session_length": 10**6, "noise_per_turn": 10**6},
            r"a session must have at most 10000000 events \(session_length \* noise_per_turn \+ "
            r"num_foundational \* \(1 \+ recalls_per_foundational\)\), got 1000000000015",
        ),
        ({"num_foundational": 10**7}, r"at most 10000000 events .*, got 50000450"),
    ],
)
def test_a_session_too_large_to_hold_is_refused_naming_the_bound(changes, message):
    with pytest.raises(ValueError, match=message):
        SessionConfig.from_dict({"seed": 0, **changes})


def test_a_session_at_the_bound_is_accepted():
    bound = sessions.MAX_SESSION_SIZE
    at = SessionConfig(seed=0, session_length=bound, noise_per_turn=0, num_foundational=0)
    assert at.session_length == bound  # not generated: the bound is what a machine can hold
    full = SessionConfig(seed=0, session_length=1000, noise_per_turn=bound // 1000 - 1, num_foundational=200)
    assert 1000 * full.noise_per_turn + 200 * 5 <= bound


def test_unknown_session_parameter_is_named():
    with pytest.raises(ValueError, match=r"unknown session parameter\(s\) \['noise'\]"):
        SessionConfig.from_dict({"seed": 0, "noise": 3})
    with pytest.raises(ValueError, match="noise_per_turn"):
        SessionConfig(seed=0).replace(noise_per_turn=-5)


@pytest.mark.parametrize(
    "changes, name",
    [
        ({"recall_jitter": (0.5, float("inf"))}, "recall_jitter"),
        ({"recall_jitter": (1,)}, "recall_jitter"),
        ({"recall_jitter": (float("nan"), 1.0)}, "recall_jitter"),
        ({"recall_jitter": (0.5, "1")}, "recall_jitter"),
        ({"recall_jitter": None}, "recall_jitter"),
        ({"recall_jitter": (0.7, 1.3, 2.0)}, "recall_jitter"),
        ({"recall_jitter": (True, 1.3)}, "recall_jitter"),
        ({"recall_jitter": (0.7, 10**400)}, "recall_jitter"),
        ({"uniform_range": (10.0, 150.0)}, "uniform_range"),
        ({"uniform_range": (10,)}, "uniform_range"),
        ({"uniform_range": None}, "uniform_range"),
        ({"uniform_range": (True, 150)}, "uniform_range"),
        ({"recall_base_offsets": (3.0, 8.0)}, "recall_base_offsets"),
        ({"recall_base_offsets": None}, "recall_base_offsets"),
        ({"recall_base_offsets": "38"}, "recall_base_offsets"),
        ({"recall_base_offsets": (3, "a")}, "recall_base_offsets"),
        ({"recall_jitter": (0.7, 1e308)}, "recall_jitter"),
        ({"recall_base_offsets": (3, 10**400)}, "recall_jitter"),
        ({"recalls_per_foundational": 7}, r"recalls_per_foundational must be <= 6"),
        (
            {"recalls_per_foundational": 3, "recall_base_offsets": (3, 8)},
            r"recalls_per_foundational must be <= 2",
        ),
        (
            {"recalls_per_foundational": 5, "schedule": "uniform", "uniform_range": (10, 12)},
            r"recalls_per_foundational must be <= 3",
        ),
    ],
)
def test_config_refuses_what_generate_session_would_fail_on_or_cap(changes, name):
    with pytest.raises(ValueError, match=name):
        SessionConfig.from_dict({"seed": 0, **changes})


def test_every_accepted_config_generates():
    for changes in (
        {"recall_jitter": [0.5, 2]},
        {"uniform_range": [2, 2], "recalls_per_foundational": 1, "schedule": "uniform"},
        {"recalls_per_foundational": 6},
    ):
        config = SessionConfig.from_dict({"seed": 1, **changes})
        assert generate_session(config).config == config


number = st.one_of(st.integers(-5, 10**6), st.floats(allow_nan=True, allow_infinity=True), st.booleans())


@settings(max_examples=300, deadline=None)
@given(
    jitter=st.one_of(
        st.tuples(st.floats(0.1, 3.0), st.one_of(st.floats(0.1, 3.0), st.sampled_from([math.inf, 1e308]))),
        st.lists(number, max_size=3),
    ),
    offsets=st.one_of(st.lists(st.integers(1, 200), min_size=1, max_size=7), st.lists(number, max_size=7)),
    span=st.one_of(
        st.tuples(st.integers(1, 80), st.integers(1, 80)),
        st.tuples(st.floats(1, 80), st.floats(1, 80)),
        st.lists(number, max_size=3),
    ),
    recalls=st.one_of(st.integers(0, 7), number),
    schedule=st.sampled_from(["spaced", "uniform"]),
    length=st.integers(1, 60),
)
def test_an_accepted_config_always_generates(jitter, offsets, span, recalls, schedule, length):
    try:
        config = SessionConfig(
            seed=0,
            session_length=length,
            num_foundational=2,
            noise_per_turn=0,
            recall_jitter=tuple(jitter),
            recall_base_offsets=tuple(offsets),
            uniform_range=tuple(span),
            recalls_per_foundational=recalls,
            schedule=schedule,
        )
    except ValueError:
        return
    session = generate_session(config)
    for fid in session.foundational_ids:
        assert len(session.recall_turns(fid)) <= config.recalls_per_foundational


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    length=st.integers(1, 200),
    recalls=st.integers(0, 6),
    schedule=st.sampled_from(["spaced", "uniform"]),
)
def test_no_recall_lands_after_the_latest_last_recall(seed, length, recalls, schedule):
    config = SessionConfig(
        seed=seed,
        session_length=length,
        recalls_per_foundational=0,
        noise_per_turn=0,
        schedule=schedule,
    )
    config = config.replace(recalls_per_foundational=min(recalls, max_recalls(config)))
    session = generate_session(config)
    latest = latest_last_recall(config)
    turns = [t for fid in session.foundational_ids for t in session.recall_turns(fid)]
    if latest is None:
        assert turns == []
    else:
        assert all(t <= latest for t in turns)


@pytest.mark.parametrize("seed", [-1, -(2**40), True, 1.0, None])
def test_a_seed_must_be_a_non_negative_int(seed):
    with pytest.raises(ValueError, match="seed must be"):
        SessionConfig(seed=seed)
    assert generate_session(SessionConfig(seed=1)).events == generate_session(SessionConfig(seed=1)).events


@pytest.mark.parametrize(
    "changes, most",
    [
        ({"session_length": 5, "recalls_per_foundational": 6}, 2),
        ({"session_length": 5, "recalls_per_foundational": 3}, 2),
        ({"session_length": 1, "recalls_per_foundational": 1}, 0),
        ({"session_length": 12, "recalls_per_foundational": 4}, 3),
        ({"session_length": 5, "recalls_per_foundational": 1, "schedule": "uniform"}, 0),
        ({"session_length": 12, "recalls_per_foundational": 4, "schedule": "uniform"}, 3),
    ],
)
def test_a_recall_count_no_seed_can_honour_is_refused_naming_both_values(changes, most):
    config = {"seed": 0, **changes}
    message = (
        rf"recalls_per_foundational must be <= {most} for session_length={changes['session_length']} "
        rf".*got {changes['recalls_per_foundational']}"
    )
    with pytest.raises(ValueError, match=message):
        SessionConfig.from_dict(config)
    assert SessionConfig.from_dict({**config, "recalls_per_foundational": most})


@settings(max_examples=200, deadline=None)
@given(
    length=st.integers(1, 200),
    schedule=st.sampled_from(["spaced", "uniform"]),
    low=st.floats(0.05, 1.0),
    first=st.integers(2, 40),
)
def test_max_recalls_is_reached_by_some_draw_and_never_exceeded(length, schedule, low, first):
    """The bound is exact: the all-``low`` draw (or the whole clipped range) places that many, no seed more."""
    config = SessionConfig(
        seed=0,
        session_length=length,
        recalls_per_foundational=0,
        schedule=schedule,
        recall_jitter=(low, 1.3),
        uniform_range=(first, 150),
    )
    most = max_recalls(config)
    full = config.replace(recalls_per_foundational=most)

    class Lowest:  # a random.Random whose every factor is the lowest value
        def uniform(self, a, b):
            return a

        def sample(self, population, count):
            return list(population)[:count]

    draw = sessions.spaced_recall_turns if schedule == "spaced" else sessions.uniform_recall_turns
    assert len(draw(Lowest(), full)) == most
    for seed in range(20):
        assert all(len(t) <= most for t in sessions.recall_schedules(full.replace(seed=seed)))
