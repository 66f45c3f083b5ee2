"""Replaying a session: the trace is deterministic and presence runs encode it exactly."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.decay.engines import EbbinghausEngine, RecencyWindow
from forgetting.studies.decay.sessions import SessionConfig, generate_session, max_recalls
from forgetting.studies.decay.simulation import simulate


def test_same_session_same_trace():
    config = SessionConfig(seed=7)
    assert simulate(EbbinghausEngine(), generate_session(config)) == simulate(
        EbbinghausEngine(), generate_session(config)
    )


def test_published_trace_spans():
    config = SessionConfig(seed=0, num_foundational=1)
    window = simulate(RecencyWindow(), generate_session(config))
    decay = simulate(EbbinghausEngine(), generate_session(config))
    assert window.presence_spans("foundational_0") == [(1, 35)]  # evicted at turn 36
    assert decay.presence_spans("foundational_0") == [(1, 150)]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), window=st.integers(1, 30), length=st.integers(1, 120))
def test_presence_spans_are_the_run_length_encoding_of_presence(seed, window, length):
    config = SessionConfig(
        seed=seed, session_length=length, num_foundational=2, noise_per_turn=1, recalls_per_foundational=0
    )
    config = config.replace(recalls_per_foundational=min(4, max_recalls(config)))  # as many as fit
    trace = simulate(RecencyWindow(window_size=window), generate_session(config))
    for mem_id in trace.created_turn:
        spans = trace.presence_spans(mem_id)
        rebuilt = [False] * length
        for start, count in spans:
            assert count >= 1 and (start == 1 or not rebuilt[start - 2])
            rebuilt[start - 1 : start - 1 + count] = [True] * count
        assert rebuilt == trace.presence(mem_id)


def test_presence_spans_of_an_unknown_id_are_empty():
    trace = simulate(
        RecencyWindow(), generate_session(SessionConfig(seed=1, session_length=5, recalls_per_foundational=2))
    )
    assert trace.presence_spans("never") == []
    with pytest.raises(KeyError, match="never"):
        trace.evicted_turn["never"]


def _clock_and_items(engine):
    return engine._clock, [(i.mem_id, i.last_touched, i.touch_count) for i in engine._items.values()]


@pytest.mark.parametrize("make", [EbbinghausEngine, RecencyWindow])
def test_an_engine_that_is_not_fresh_is_refused_and_left_as_it_was(make):
    session = generate_session(SessionConfig(seed=3, session_length=20))
    used = make()
    simulate(used, session)  # holds items, clock at 20
    emptied = make()
    emptied.register("x", "", 2)
    emptied.step(40)  # no item left, but its clock is past the session's turns
    preloaded = make()
    preloaded.register("extra", "", 0)  # turn 0: the replay would run, with an item the session never made
    cases = (
        (used, r"it holds \d+ item\(s\)"),
        (emptied, "its clock is at turn 40"),
        (preloaded, "it holds 1 item"),
    )
    for engine, why in cases:
        before = _clock_and_items(engine)
        with pytest.raises(ValueError, match=rf"^engine must be fresh .*{why}"):
            simulate(engine, session)
        assert _clock_and_items(engine) == before
    assert simulate(make(), session) == simulate(make(), session)


def test_simulate_names_an_argument_that_is_not_an_engine_or_a_session():
    session = generate_session(SessionConfig(seed=3, session_length=20))
    with pytest.raises(
        ValueError, match=r"^engine must be an engine \(register, recall, step, working_set_size\), got None"
    ):
        simulate(None, session)
    with pytest.raises(ValueError, match="^session must be a Session .*, got SessionConfig"):
        simulate(EbbinghausEngine(), session.config)
    with pytest.raises(ValueError, match="engine must be an engine .*; session must be a Session"):
        simulate("engine", None)
