"""The session generator follows its stated rules."""

import random

import pytest
from hypothesis import given, settings, strategies as st

from forgetting.sessions import SessionConfig, generate_session, RECALL_BASE_OFFSETS


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), length=st.integers(1, 400), facts=st.integers(0, 4),
       recalls=st.integers(0, 6), noise=st.integers(0, 3))
def test_spaced_schedule_matches_rules(seed, length, facts, recalls, noise):
    config = SessionConfig(seed=seed, session_length=length, num_foundational=facts,
                           recalls_per_foundational=recalls, noise_per_turn=noise)
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
    assert [e for e in session.events if e[1] == "register" and e[3]] == \
        [(1, "register", fid, True) for fid in session.foundational_ids]


def test_uniform_schedule_draws_distinct_turns_in_range():
    session = generate_session(SessionConfig(seed=3, schedule="uniform", uniform_range=(10, 150)))
    for fid in session.foundational_ids:
        turns = session.recall_turns(fid)
        assert len(turns) == 4 == len(set(turns)) and all(10 <= t <= 150 for t in turns)


@pytest.mark.parametrize("changes, name", [
    ({"session_length": 0}, "session_length"), ({"noise_per_turn": -1}, "noise_per_turn"),
    ({"num_foundational": 1.5}, "num_foundational"), ({"schedule": "random"}, "schedule"),
    ({"recall_jitter": (1.3, 0.7)}, "recall_jitter"), ({"recall_base_offsets": ()}, "recall_base_offsets"),
    ({"seed": "0"}, "seed"), ({"uniform_range": (0, 10)}, "uniform_range"),
])
def test_bad_session_parameters(changes, name):
    with pytest.raises(ValueError, match=name):
        SessionConfig.from_dict({"seed": 0, **changes})


def test_unknown_session_parameter_is_named():
    with pytest.raises(ValueError, match=r"unknown session parameter\(s\) \['noise'\]"):
        SessionConfig.from_dict({"seed": 0, "noise": 3})
    with pytest.raises(ValueError, match="noise_per_turn"):
        SessionConfig(seed=0).replace(noise_per_turn=-5)
