"""Replaying a session: the trace is deterministic and presence runs encode it exactly."""

from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.conversations.policies import Event, replay
from forgetting.decay.engines import EbbinghausEngine, RecencyWindow
from forgetting.studies.decay.policies import DecayPolicy, WindowPolicy
from forgetting.studies.decay.sessions import Action, Session, SessionConfig, generate_session, max_recalls
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


# --- the article's replay against the library's driver (CONTRIBUTING.md, "The article's replay
# and the library's driver") ----------------------------------------------------------------

FACT = "foundational_0"


def one_fact(length: int, recall_turns) -> Session:
    """The article's session of one fact, registered at turn 1 and recalled at ``recall_turns``, no noise."""
    # simulate reads the config's length only; the recalls are the events' (no schedule's bound)
    config = SessionConfig(
        seed=0, session_length=length, num_foundational=1, noise_per_turn=0, recalls_per_foundational=0
    )
    events = [(1, Action.REGISTER, FACT, True), *((t, Action.RECALL, FACT, True) for t in recall_turns)]
    return Session(config, events, [FACT])


def library_events(length: int, recall_turns) -> list[Event]:
    """The nearest stream of the library's events: one per turn, the fact stored at turn 1, a
    filler stored at every later turn (an event stores exactly one memory), the recalls as they are."""
    recalled = set(recall_turns)
    return [
        Event(t, datetime(2024, 1, 1), 1, FACT if t == 1 else f"filler_{t}", (FACT,) if t in recalled else ())
        for t in range(1, length + 1)
    ]


def test_the_counterexample_the_library_driver_drops_what_the_article_recalls():
    # Window W = 2: the fact, last touched at turn 1, is due at turn 1 + 2 + 1 = 4, the turn of its recall.
    policy = WindowPolicy(2)
    article = simulate(policy.engine(), one_fact(6, [4]))
    assert article.recalls == [(4, FACT, True)] and FACT not in article.evicted_turn  # recall, then step
    library = replay(policy, library_events(6, [4]))
    assert library.dropped_at(FACT) == 4 and library.missed_recalls == 1  # forget, then recall


def test_the_library_driver_refuses_the_article_s_turn_of_several_registrations():
    session = generate_session(SessionConfig(seed=0))
    first_turn = [
        mem_id for turn, action, mem_id, _ in session.events if turn == 1 and action == Action.REGISTER
    ]
    assert len(first_turn) == 6  # three facts and three noise items
    events = [Event(1, datetime(2024, 1, 1), 1, mem_id) for mem_id in first_turn]
    with pytest.raises(ValueError, match=r"events\[1\].turn must be an int >= 2, got 1"):
        replay(WindowPolicy(), events)


policies = st.one_of(
    st.builds(DecayPolicy, st.sampled_from([0.05, 0.2, 0.5, 0.9]), st.sampled_from([1.0, 2.0, 8.0])),
    st.builds(WindowPolicy, st.integers(1, 20)),
)


@settings(max_examples=150, deadline=None)
@given(policy=policies, length=st.integers(2, 80), data=st.data())
def test_the_two_drivers_differ_only_at_a_recall_on_the_eviction_turn(policy, length, data):
    recall_turns = sorted(data.draw(st.sets(st.integers(2, length), max_size=6)))
    article = simulate(policy.engine(), one_fact(length, recall_turns))
    library = replay(policy, library_events(length, recall_turns))
    dropped = library.dropped.get(FACT)
    if dropped in recall_turns:  # the article recalls first, then steps: the fact is found and kept
        assert (dropped, FACT, True) in article.recalls
        assert article.evicted_turn.get(FACT, length + 1) > dropped
    else:  # the same replay: the same eviction turn and the same recall outcomes
        assert article.evicted_turn.get(FACT) == dropped
        assert [found for _, _, found in article.recalls].count(False) == library.missed_recalls


def test_the_library_driver_refuses_a_recall_in_the_event_that_stores_it():
    # The article may register a fact and recall it in one turn (uniform schedule from turn 1).
    session = generate_session(
        SessionConfig(seed=0, schedule="uniform", uniform_range=(1, 2), recalls_per_foundational=2)
    )
    assert (1, Action.RECALL, FACT, True) in session.events
    assert simulate(WindowPolicy().engine(), session).recalls[0] == (1, FACT, True)
    with pytest.raises(ValueError, match=r"events\[0\].recalled must name memories stored before"):
        replay(WindowPolicy(), [Event(1, datetime(2024, 1, 1), 1, FACT, (FACT,))])
