"""Replaying a session: the trace is deterministic and presence runs encode it exactly."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.decay.engines import EbbinghausEngine, RecencyWindow
from forgetting.decay.sessions import SessionConfig, generate_session, max_recalls
from forgetting.decay.simulation import simulate


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
    trace = simulate(RecencyWindow(window), generate_session(config))
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
