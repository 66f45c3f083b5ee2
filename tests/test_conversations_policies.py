"""Replaying a conversation through a forgetting policy: the stream, keep-everything, decay, the window."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversation_streams import START, stream, streams
from forgetting.conversations import load_locomo
from forgetting.conversations.capacity import Capacity, RandomEviction
from forgetting.conversations.field_rules import MemoryBank, YourMemory
from forgetting.conversations.policies import (
    Ebbinghaus,
    Event,
    KeepAll,
    Window,
    check_events,
    conversation_events,
    day_number,
    replay,
    replay_state,
)
from forgetting.decay.curves import reinforced_stability, retention
from locomo_fixture import write_fixture

ALL_POLICIES = [
    KeepAll(),
    Ebbinghaus(),
    Ebbinghaus(0.3, 2.0, clock="days"),
    Window(3),
    Capacity(4),
    Capacity(4, "fifo"),
    Capacity(4, "lfu"),
    RandomEviction(4, seed=7),
    MemoryBank(seed=3),
    MemoryBank(seed=3, forget_at="turn"),
    YourMemory(),
    YourMemory(0.5, forget_at="session"),
]


def decay_reference(events, threshold, stability0, days=False):
    """A direct reading of the decay rule: drop when exp(-t/S) < theta; recall: n += 1, S *= 1 + ln(1 + n)."""
    clock = (lambda e: day_number(e.time)) if days else (lambda e: e.turn)
    held, dropped = {}, {}  # id -> [S, n, last]
    for event in events:
        now = clock(event)
        for mem_id, (s, _, last) in list(held.items()):
            if retention(now - last, s) < threshold:
                del held[mem_id]
                dropped[mem_id] = event.turn
        for mem_id in event.recalled:
            if mem_id in held:
                s, n, _ = held[mem_id]
                held[mem_id] = [reinforced_stability(s, n + 1), n + 1, now]
        held[event.stored] = [stability0, 1, now]
    return dropped, tuple(held)


def window_reference(events, window):
    last, dropped = {}, {}
    for event in events:
        for mem_id in [m for m, t in last.items() if event.turn - t > window]:
            del last[mem_id]
            dropped[mem_id] = event.turn
        for mem_id in event.recalled:
            if mem_id in last:
                last[mem_id] = event.turn
        last[event.stored] = event.turn
    return dropped, tuple(last)


# --- the stream and the result -------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(streams())
def test_every_policy_accounts_for_every_memory_and_a_short_replay_starts_a_long_one(events):
    for policy in ALL_POLICIES:
        result = replay(policy, events)
        assert result.policy == policy.label
        assert set(result.dropped).isdisjoint(result.held)
        assert set(result.dropped) | set(result.held) == set(result.stored) == {e.stored for e in events}
        assert list(result.held) == [m for m in result.stored if m in result.held]  # store order
        assert result.held_counts[-1] == len(result.held)
        assert all(result.dropped[f"m{i}"] > i for i in range(len(events)) if f"m{i}" in result.dropped)
        for n in (1, len(events) // 2):
            short = replay(policy, events[:n])
            assert short.held_counts == result.held_counts[:n]
            assert short.dropped == {m: t for m, t in result.dropped.items() if t < n}


def test_missed_recalls_count_recalls_of_dropped_memories_and_change_nothing():
    events = stream([0, 0, 0, 0, 0, 0], {5: [0, 4]})
    result = replay(Window(2), events)
    assert result.dropped == {"m0": 3, "m1": 4, "m2": 5} and result.missed_recalls == 1
    assert result.dropped_at("m4") is None and result.dropped_at("m0") == 3
    with pytest.raises(KeyError, match="'m9' was never stored"):
        result.dropped_at("m9")


@settings(max_examples=60, deadline=None)
@given(streams())
def test_keep_everything_keeps_everything(events):
    result = replay(KeepAll(), events)
    assert result.dropped == {} and result.held == result.stored
    assert result.held_counts == tuple(range(1, len(events) + 1)) and result.missed_recalls == 0


# --- decay on turns and on days ------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(
    streams(),
    st.sampled_from([0.05, 0.2, 0.5, 0.9]),
    st.sampled_from([0.5, 1.0, 3.0, 8.0]),
    st.booleans(),
)
def test_decay_agrees_with_a_direct_reading_of_its_formula(events, threshold, stability0, days):
    result = replay(Ebbinghaus(threshold, stability0, clock="days" if days else "turns"), events)
    assert (result.dropped, result.held) == decay_reference(events, threshold, stability0, days)


def test_decay_on_turns_at_the_engines_defaults_drops_a_plain_memory_after_thirteen_turns():
    result = replay(Ebbinghaus(), stream([0] * 20))
    assert result.dropped_at("m0") == 13 and result.dropped_at("m6") == 19 and "m7" in result.held


def test_a_memory_exactly_at_the_threshold_is_kept_and_dropped_the_next_turn():
    threshold = retention(2, 8.0)  # exp(-2/8) exactly, as the engine evaluates it
    assert replay(Ebbinghaus(threshold, 8.0), stream([0, 0, 0])).held == ("m0", "m1", "m2")
    assert replay(Ebbinghaus(threshold, 8.0), stream([0, 0, 0, 0])).dropped == {"m0": 3}


def test_a_recall_strengthens_the_memory_as_the_engine_does():
    plain = replay(Ebbinghaus(), stream([0] * 40))
    recalled = replay(Ebbinghaus(), stream([0] * 40, {5: [0]}))
    assert plain.dropped_at("m0") == 13
    assert recalled.dropped_at("m0") == 5 + int(reinforced_stability(8.0, 2) * 1.6094379124341003) + 1


def test_decay_on_days_reads_whole_calendar_days_of_real_time():
    # stored on day 0; exp(-t/8) < 0.2 first at t = 13 days; the turn index never matters
    result = replay(Ebbinghaus(clock="days"), stream([0, 5, 12, 13, 13]))
    assert result.dropped == {"m0": 3} and result.held == ("m1", "m2", "m3", "m4")
    late_evening = [
        Event(0, datetime(2023, 5, 8, 23, 59), 1, "a"),
        Event(1, datetime(2023, 5, 21, 0, 1), 2, "b"),
    ]
    assert replay(Ebbinghaus(clock="days"), late_evening).dropped == {
        "a": 1
    }  # 13 dates apart, 12 days of time


# --- the window -----------------------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(streams(), st.integers(1, 8))
def test_window_agrees_with_a_direct_reading_and_a_long_one_keeps_everything(events, window):
    result = replay(Window(window), events)
    assert (result.dropped, result.held) == window_reference(events, window)
    assert replay(Window(len(events)), events).dropped == {}


def test_window_holds_a_memory_for_w_turns_after_its_last_touch():
    result = replay(Window(3), stream([0] * 10, {3: [0]}))
    assert result.dropped_at("m0") == 7 and result.dropped_at("m1") == 5


# --- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: Ebbinghaus(eviction_threshold=1.0),
            r"eviction_threshold must be a real number in \(0, 1\), got 1.0",
        ),
        (
            lambda: Ebbinghaus(eviction_threshold="0.2"),
            r"eviction_threshold must be a real number in \(0, 1\), got '0.2'",
        ),
        (
            lambda: Ebbinghaus(baseline_stability=0),
            r"baseline_stability must be a finite real number > 0, got 0",
        ),
        (
            lambda: Ebbinghaus(baseline_stability=True),
            r"baseline_stability must be a finite real number > 0, got True",
        ),
        (lambda: Ebbinghaus(clock="weeks"), r"clock must be one of 'turns', 'days', got 'weeks'"),
        (lambda: Window(0), r"window_size must be an int >= 1, got 0"),
        (lambda: Window(2.0), r"window_size must be an int >= 1, got 2.0"),
    ],
)
def test_bad_parameters_are_refused_with_the_argument_the_value_and_what_is_allowed(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def _bad_streams():
    good = stream([0, 1, 2], {2: [0]})
    return [
        (good[:1] + [good[1]._replace(turn=0)], r"events\[1\].turn must be an int >= 1, got 0"),
        (good[:1] + [good[1]._replace(turn=1.0)], r"events\[1\].turn must be an int >= 1, got 1.0"),
        (good[:1] + [good[1]._replace(time=START - timedelta(1))], r"events\[1\].time must be a datetime"),
        (
            good[:1] + [good[1]._replace(time="2023-05-08")],
            r"events\[1\].time must be a datetime.*got '2023-05-08'",
        ),
        (good[:1] + [good[1]._replace(session=0)], r"events\[1\].session must be an int >= 1, got 0"),
        (
            good[:1] + [good[1]._replace(stored="m0")],
            r"events\[1\].stored must be a non-empty str not stored before",
        ),
        (good[:1] + [good[1]._replace(stored="")], r"events\[1\].stored must be a non-empty str"),
        (
            good[:2] + [good[2]._replace(recalled=("m0", "m0"))],
            r"events\[2\].recalled must be a tuple of ids without",
        ),
        (good[:2] + [good[2]._replace(recalled=["m0"])], r"events\[2\].recalled must be a tuple"),
        (
            good[:2] + [good[2]._replace(recalled=("m2",))],
            r"events\[2\].recalled must name memories stored before",
        ),
        ([good[0], (1, START, 1, "m1", ())], r"events\[1\] must be an Event, got \(1,"),
        (
            good[:1] + [good[1]._replace(time=good[1].time.replace(tzinfo=UTC))],
            r"events\[1\].time must be naive as events\[0\].time is \(no mix of naive and aware datetimes\), got",
        ),
        (
            [good[0]._replace(time=START.replace(tzinfo=UTC)), *good[1:]],
            r"events\[1\].time must be aware as events\[0\].time is",
        ),
    ]


@pytest.mark.parametrize(("events", "message"), _bad_streams())
def test_bad_events_are_refused_before_anything_runs(events, message):
    with pytest.raises(ValueError, match=message):
        replay(KeepAll(), events)


@pytest.mark.parametrize("call", [replay, replay_state])
def test_replay_names_a_policy_or_events_that_are_not_what_it_replays(call):
    with pytest.raises(ValueError, match=r"^policy must be a policy \(a str label and start\(\)\), got None"):
        call(None, stream([0, 1]))
    with pytest.raises(ValueError, match=r"^events must be an iterable of Events, got None"):
        call(KeepAll(), None)
    with pytest.raises(
        ValueError, match=r"policy must be a policy .*; events must be an iterable of Events, got 3"
    ):
        call("KeepAll", 3)
    with pytest.raises(ValueError, match=r"^events must be an iterable of Events, got None"):
        check_events(None)


def test_a_policy_that_drops_what_it_does_not_hold_is_caught():
    class Liar(KeepAll):
        def start(self):
            holder = super().start()
            holder.forget = lambda event: ["ghost"]
            return holder

    with pytest.raises(ValueError, match=r"dropped memories it does not hold at turn 0: \['ghost'\]"):
        replay(Liar(), stream([0]))


# --- a LoCoMo-format conversation ------------------------------------------------------------------


def word_overlap(conversation, letters=5):
    """A trivial retriever: before turn i, every earlier turn sharing a word of >= letters letters."""

    def words(turn):
        cleaned = "".join(c if c.isalpha() else " " for c in turn.memory_text.lower())
        return {w for w in cleaned.split() if len(w) >= letters}

    seen = [words(turn) for turn in conversation.turns]
    return [[t.dia_id for t in conversation.turns[:i] if seen[i] & seen[t.index]] for i in range(len(seen))]


def test_replay_over_the_fixture_conversation(tmp_path):
    fixture = write_fixture(tmp_path / "locomo10.zip")
    first, second = load_locomo(fixture.path, fixture.sha256, fixture.members)
    recalled = word_overlap(first)
    assert recalled[4] == ["D1:1"] and sum(map(len, recalled)) == 1  # "tomatoes", 14 days later
    events = conversation_events(first, recalled)
    assert [e.session for e in events] == [1, 1, 1, 2, 2, 3, 3] and events[4].recalled == ("D1:1",)
    assert replay(KeepAll(), events).held == tuple(t.dia_id for t in first.turns)
    on_turns = replay(Ebbinghaus(), events)
    assert on_turns.dropped == {} and on_turns.missed_recalls == 0
    on_days = replay(Ebbinghaus(clock="days"), events)  # 14 days: exp(-14/8) < 0.2 before the recall
    assert (
        on_days.dropped == {"D1:1": 3, "D1:2": 3, "D1:3": 3, "D2:1": 5, "D2:2": 5}
        and on_days.missed_recalls == 1
    )
    for policy in ALL_POLICIES:
        assert len(replay(policy, events).held) <= (
            4 if isinstance(policy, (Capacity, RandomEviction)) else 7
        )
    assert [e.session for e in conversation_events(second)] == [1, 2, 2, 10]
    with pytest.raises(ValueError, match=r"recalled must hold one sequence per turn \(7\), got \[\]"):
        conversation_events(first, [])
