"""Replaying a session: the trace is deterministic and presence runs encode it exactly."""

from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.conversations.policies import Event, replay
from forgetting.curves.power_engine import PowerLawEngine
from forgetting.decay.engines import EbbinghausEngine, RecencyWindow
from forgetting.studies.decay.capacity import CapacityDecay, CapacityWindow
from forgetting.studies.decay.policies import DecayPolicy, WindowPolicy
from forgetting.studies.decay.sessions import Action, Session, SessionConfig, generate_session, max_recalls
from forgetting.studies.decay.simulation import Trace, session_events, simulate
from forgetting.studies.decay.wallclock import LatencyModel, VirtualClock, WallClockEngine
from session_configs import with_recalls


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


# --- the article's replay is the library's driver in the article's order --------------------

FACT = "foundational_0"


def one_fact(length: int, recall_turns) -> Session:
    """The article's session of one fact, registered at turn 1 and recalled at ``recall_turns``, no noise."""
    # simulate reads the config's length only; the recalls are the events' (no schedule's bound)
    config = SessionConfig(
        seed=0, session_length=length, num_foundational=1, noise_per_turn=0, recalls_per_foundational=0
    )
    events = [(1, Action.REGISTER, FACT, True), *((t, Action.RECALL, FACT, True) for t in recall_turns)]
    return Session(config, events, [FACT])


def article_loop(engine, session: Session) -> Trace:
    """A direct reading of the article's replay: for each turn, its events in session order
    (register or recall, the recall's return value recorded), then one ``step``."""
    length = session.config.session_length
    trace = Trace(length, list(session.foundational_ids))
    foundational, present, events, index = set(session.foundational_ids), 0, session.events, 0
    for turn in range(1, length + 1):
        while index < len(events) and events[index][0] == turn:
            _, action, mem_id, is_foundational = events[index]
            index += 1
            if action == Action.REGISTER:
                engine.register(mem_id, mem_id, turn, is_foundational)
                trace.created_turn[mem_id] = turn
                present += mem_id in foundational
            else:
                trace.recalls.append((turn, mem_id, engine.recall(mem_id, turn)))
        for mem_id in engine.step(turn):
            trace.evicted_turn[mem_id] = turn
            present -= mem_id in foundational
        trace.working_set_sizes.append(engine.working_set_size())
        trace.foundational_present.append(present)
    return trace


ENGINES = {
    "decay": lambda: EbbinghausEngine(),
    "decay θ 0.3 S₀ 2": lambda: EbbinghausEngine(eviction_threshold=0.3, baseline_stability=2.0),
    "window": lambda: RecencyWindow(),
    "window W 3": lambda: RecencyWindow(window_size=3),
    "power law": lambda: PowerLawEngine(baseline_stability=8.0, decay=0.5),
    "capacity decay": lambda: CapacityDecay(capacity=5, eviction_threshold=0.2),
    "capacity decay, budget only": lambda: CapacityDecay(capacity=4),
    "capacity window": lambda: CapacityWindow(capacity=6, window_size=10),
    "capacity window, budget only": lambda: CapacityWindow(capacity=3),
    "wall clock": lambda: WallClockEngine(VirtualClock("1/0", LatencyModel())),
}

configs = with_recalls(
    st.builds(
        SessionConfig,
        seed=st.integers(0, 10**6),
        session_length=st.integers(1, 120),
        num_foundational=st.integers(0, 4),
        recalls_per_foundational=st.just(0),
        noise_per_turn=st.integers(0, 4),
        schedule=st.sampled_from(["spaced", "uniform"]),
        uniform_range=st.tuples(st.integers(2, 20), st.integers(20, 120)),
    ),
    4,
)


@settings(max_examples=200, deadline=None)
@given(config=configs, engine=st.sampled_from(sorted(ENGINES)))
def test_simulate_is_the_article_s_loop(config, engine):
    # Every engine of the book's decay chapters: the same trace, dicts in the same order.
    session = generate_session(config)
    ours, theirs = simulate(ENGINES[engine](), session), article_loop(ENGINES[engine](), session)
    assert ours == theirs
    assert list(ours.evicted_turn.items()) == list(theirs.evicted_turn.items())
    assert list(ours.created_turn.items()) == list(theirs.created_turn.items())


def test_a_turn_is_one_event_storing_its_registrations_after_its_recalls():
    session = generate_session(SessionConfig(seed=0))
    events = session_events(session)
    assert [event.turn for event in events] == list(range(1, 151))
    assert events[0].stored == [*session.foundational_ids, "noise_1_0", "noise_1_1", "noise_1_2"]
    recalls = [(t, mem_id) for t, action, mem_id, _ in session.events if action == Action.RECALL]
    assert [(event.turn, mem_id) for event in events for mem_id in event.recalled] == recalls


def test_the_order_decides_a_recall_on_the_eviction_turn():
    # Window W = 2: the fact, last touched at turn 1, is due at turn 1 + 2 + 1 = 4, the turn of its recall.
    policy = WindowPolicy(2)
    session = one_fact(6, [4])
    article = simulate(policy.engine(), session)
    assert article.recalls == [(4, FACT, True)] and FACT not in article.evicted_turn  # recall, then step
    first = replay(policy, session_events(session), order="forget-first")
    assert first.dropped_at(FACT) == 4 and first.missed_recalls == 1  # forget, then recall
    last = replay(policy, session_events(session), order="forget-last")
    assert last.dropped_at(FACT) is None and last.missed_recalls == 0


policies = st.one_of(
    st.builds(DecayPolicy, st.sampled_from([0.05, 0.2, 0.5, 0.9]), st.sampled_from([1.0, 2.0, 8.0])),
    st.builds(WindowPolicy, st.integers(1, 20)),
)


@settings(max_examples=150, deadline=None)
@given(policy=policies, length=st.integers(2, 80), data=st.data())
def test_the_two_orders_differ_only_at_a_recall_on_the_eviction_turn(policy, length, data):
    recall_turns = sorted(data.draw(st.sets(st.integers(2, length), max_size=6)))
    article = simulate(policy.engine(), one_fact(length, recall_turns))
    library = replay(policy, session_events(one_fact(length, recall_turns)))  # forget-first
    dropped = library.dropped.get(FACT)
    if dropped in recall_turns:  # the article recalls first, then steps: the fact is found and kept
        assert (dropped, FACT, True) in article.recalls
        assert article.evicted_turn.get(FACT, length + 1) > dropped
    else:  # the same replay: the same eviction turn and the same recall outcomes
        assert article.evicted_turn.get(FACT) == dropped
        assert [found for _, _, found in article.recalls].count(False) == library.missed_recalls


def test_no_session_recalls_a_fact_on_the_turn_that_registers_it():
    # What lets one event store a turn's registrations after its recalls (simulation's docstring).
    with pytest.raises(ValueError, match=r"uniform_range .*2 <= first"):
        SessionConfig(seed=0, schedule="uniform", uniform_range=(1, 2), recalls_per_foundational=2)
    with pytest.raises(ValueError, match=r"events\[0\].recalled must name memories stored before"):
        replay(WindowPolicy(), [Event(1, datetime(2024, 1, 1), 1, [FACT], (FACT,))])
