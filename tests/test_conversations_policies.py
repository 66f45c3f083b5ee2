"""Replaying a conversation through a forgetting policy: the stream, keep-everything, decay, the window."""

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversation_streams import START, stream, streams
from forgetting.conversations import load_locomo
from forgetting.conversations.capacity import CAPACITY_RULES, Capacity, CapacityRule, RandomEviction
from forgetting.conversations.field_rules import (
    PASS_TIMES,
    MemoryBank,
    MemoryBankCode,
    PassTime,
    YourMemory,
    YourMemoryClock,
)
from forgetting.conversations.policies import (
    DECAY_CLOCKS,
    DecayClock,
    Ebbinghaus,
    Event,
    KeepAll,
    ReplayRun,
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
    Ebbinghaus(eviction_threshold=0.35, baseline_stability=2.0, clock="days"),
    Window(window_size=3),
    Capacity(capacity=4),
    Capacity(capacity=4, rule="fifo"),
    Capacity(capacity=4, rule="lfu"),
    RandomEviction(capacity=4, seed=7),
    MemoryBank(seed=3),
    MemoryBank(seed=3, forget_at="turn"),
    YourMemory(),
    YourMemory(importance=0.5, forget_at="session"),
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
    result = replay(Window(window_size=2), events)
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
    result = replay(
        Ebbinghaus(
            eviction_threshold=threshold, baseline_stability=stability0, clock="days" if days else "turns"
        ),
        events,
    )
    assert (result.dropped, result.held) == decay_reference(events, threshold, stability0, days)


def test_decay_on_turns_at_the_engines_defaults_drops_a_plain_memory_after_thirteen_turns():
    result = replay(Ebbinghaus(), stream([0] * 20))
    assert result.dropped_at("m0") == 13 and result.dropped_at("m6") == 19 and "m7" in result.held


def test_a_memory_exactly_at_the_threshold_is_kept_and_dropped_the_next_turn():
    threshold = retention(2, 8.0)  # exp(-2/8) exactly, as the engine evaluates it
    assert replay(
        Ebbinghaus(eviction_threshold=threshold, baseline_stability=8.0), stream([0, 0, 0])
    ).held == ("m0", "m1", "m2")
    assert replay(
        Ebbinghaus(eviction_threshold=threshold, baseline_stability=8.0), stream([0, 0, 0, 0])
    ).dropped == {"m0": 3}


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
    result = replay(Window(window_size=window), events)
    assert (result.dropped, result.held) == window_reference(events, window)
    assert replay(Window(window_size=len(events)), events).dropped == {}


def test_window_holds_a_memory_for_w_turns_after_its_last_touch():
    result = replay(Window(window_size=3), stream([0] * 10, {3: [0]}))
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
        (lambda: Window(window_size=0), r"window_size must be an int >= 1, got 0"),
        (lambda: Window(window_size=2.0), r"window_size must be an int >= 1, got 2.0"),
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
        (good[:1] + [good[1]._replace(turn=True)], r"events\[1\].turn must be an int >= 1, got True"),
        (good[:1] + [good[1]._replace(turn="1")], r"events\[1\].turn must be an int >= 1, got '1'"),
        (
            good[:1] + [good[1]._replace(session=np.float64(2))],
            r"events\[1\].session must be an int >= 1, got",
        ),
        (
            good[:1] + [good[1]._replace(stored="m0")],
            r"events\[1\].stored must be an id not stored before, got 'm0'",
        ),
        (
            good[:1] + [good[1]._replace(stored=np.str_("m0"))],
            r"events\[1\].stored must be an id not stored before",
        ),
        (
            good[:1] + [good[1]._replace(stored=True)],
            r"events\[1\].stored must be a memory id \(hashable, not a bool, equal to itself\) or a list "
            r"of them, got True",
        ),
        (
            good[:1] + [good[1]._replace(stored=float("nan"))],
            r"events\[1\].stored must be a memory id .*got nan",
        ),
        (
            good[:1] + [good[1]._replace(stored=["m1", True])],
            r"events\[1\].stored must be a memory id .*or a list of them, got \['m1', True\]",
        ),
        (
            good[:1] + [good[1]._replace(stored=["m1", ["m2"]])],
            r"events\[1\].stored must be a memory id .*or a list of them",
        ),
        (
            good[:1] + [good[1]._replace(stored=["m1", "m0"])],
            r"events\[1\].stored must list ids not stored before, each once, got \['m0'\]",
        ),
        (
            good[:1] + [good[1]._replace(stored=["m1", "m1"])],
            r"events\[1\].stored must list ids not stored before, each once, got \['m1', 'm1'\]",
        ),
        (
            good[:2] + [good[2]._replace(recalled=("m0", "m0"))],
            r"events\[2\].recalled must be a tuple or list of ids without repeats, got \('m0', 'm0'\)",
        ),
        (good[:2] + [good[2]._replace(recalled="m0")], r"events\[2\].recalled must be a tuple or list"),
        (good[:2] + [good[2]._replace(recalled={"m0"})], r"events\[2\].recalled must be a tuple or list"),
        (
            good[:2] + [good[2]._replace(recalled=(np.bool_(True),))],
            r"events\[2\].recalled must hold memory ids \(hashable, not a bool, equal to itself\)",
        ),
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


# --- parameters: keyword-only, closed sets as enums, labels as published ---------------------------

PUBLISHED_LABELS = [  # ALL_POLICIES' labels before the enums: tables and legends carry them
    "Keep everything",
    "Ebbinghaus decay on turns (θ = 0.20, S₀ = 8)",
    "Ebbinghaus decay on days (θ = 0.35, S₀ = 2)",
    "Recency window (W = 3)",
    "LRU (C = 4)",
    "FIFO (C = 4)",
    "LFU (C = 4)",
    "Random eviction (C = 4, seed 7)",
    "MemoryBank (S ≤ 3, 30 days, pass per session, seed 3)",
    "MemoryBank (S ≤ 3, 30 days, pass per turn, seed 3)",
    "YourMemory (imp = 1, λ = 0.16, prune < 0.05, pass per turn)",
    "YourMemory (imp = 0.5, λ = 0.16, prune < 0.05, pass per session)",
]


def test_labels_are_the_published_strings_however_they_are_shown():
    for policy, label in zip(ALL_POLICIES, PUBLISHED_LABELS, strict=True):
        assert type(policy.label) is str and policy.label == label
        assert (repr(policy.label), str(policy.label), f"{policy.label}") == (repr(label), label, label)
        assert json.dumps(policy.label) == json.dumps(label) and json.dumps(
            {"policy": policy.label}
        ) == json.dumps({"policy": label})


@pytest.mark.parametrize(
    ("make", "name", "member"),
    [
        (lambda value: Ebbinghaus(clock=value), "clock", DecayClock.DAYS),
        (lambda value: Capacity(capacity=2, rule=value), "rule", CapacityRule.LFU),
        (lambda value: MemoryBank(seed=0, forget_at=value), "forget_at", PassTime.DAY),
        (lambda value: YourMemory(forget_at=value), "forget_at", PassTime.SESSION),
        (lambda value: MemoryBank(seed=0, code=value), "code", MemoryBankCode.HEAD),
        (lambda value: YourMemory(clock=value), "clock", YourMemoryClock.ACTIVE),
    ],
)
def test_a_closed_set_is_an_enum_given_as_the_member_or_its_string(make, name, member):
    by_string, by_member = make(member.value), make(member)
    assert getattr(by_string, name) is member and getattr(by_member, name) is member
    assert (
        by_string == by_member and hash(by_string) == hash(by_member) and by_string.label == by_member.label
    )
    assert (str(member), f"{member}", json.dumps(member)) == (member.value, member.value, f'"{member.value}"')
    with pytest.raises(ValueError, match=rf"^{name} must be one of .*, got 'never'$"):
        make("never")


def test_the_allowed_values_are_still_plain_strings():
    assert DECAY_CLOCKS == ("turns", "days") and CAPACITY_RULES == ("lru", "fifo", "lfu")
    assert PASS_TIMES == ("turn", "session", "day")
    assert all(type(value) is str for value in DECAY_CLOCKS + CAPACITY_RULES + PASS_TIMES)
    assert [m.value for m in DecayClock] == list(DECAY_CLOCKS) and [m.value for m in PassTime] == list(
        PASS_TIMES
    )


@pytest.mark.parametrize(
    ("cls", "arguments"),
    [
        (KeepAll, (1,)),
        (Ebbinghaus, (0.2,)),
        (Window, (3,)),
        (Capacity, (3, "lru")),
        (RandomEviction, (3, 0)),
        (MemoryBank, (0,)),
        (YourMemory, (0.5,)),
    ],
)
def test_policy_parameters_are_keyword_only(cls, arguments):
    with pytest.raises(TypeError, match=r"positional argument"):
        cls(*arguments)


# --- events as users write them ---------------------------------------------------------------------


def test_events_as_users_write_them_are_read_as_python_values():
    plain = stream([0, 0, 1, 2, 2], {2: [0], 3: [2, 1], 4: [3]})
    written = [
        Event(np.int64(e.turn), e.time, np.int32(e.session), np.str_(e.stored), list(e.recalled))
        for e in plain
    ]
    written[4] = written[4]._replace(recalled=np.array(["m3"]))  # a ranking as an array
    checked = check_events(written)
    assert checked == tuple(plain)
    for event in checked:
        assert [type(v) for v in event[:2]] == [int, datetime] and type(event.session) is int
        assert type(event.stored) is str and type(event.recalled) is tuple
        assert all(type(mem_id) is str for mem_id in event.recalled)
    assert type(written[3].recalled) is list  # what was given is not changed
    for policy in ALL_POLICIES:
        assert replay(policy, written) == replay(policy, plain)
        assert replay(policy, written, k=1) == replay(policy, plain, k=1)


def test_ids_are_any_hashable_value_but_a_bool_or_a_value_not_equal_to_itself():
    ids = [0, "", ("a", 1), np.int64(7), 2.5, frozenset({"x"})]
    recalls = {2: [0], 3: [2, 1], 4: [0, 3], 5: [4]}
    named = stream([0, 0, 1, 2, 2, 3], recalls)
    as_written = [
        e._replace(stored=ids[i], recalled=[ids[j] for j in recalls.get(i, ())]) for i, e in enumerate(named)
    ]
    plain = {f"m{i}": (7 if i == 3 else mem_id) for i, mem_id in enumerate(ids)}
    for policy in ALL_POLICIES:
        by_name, by_id = replay(policy, named), replay(policy, as_written)
        assert by_id.stored == (0, "", ("a", 1), 7, 2.5, frozenset({"x"})) and type(by_id.stored[3]) is int
        assert by_id.dropped == {plain[m]: turn for m, turn in by_name.dropped.items()}
        assert by_id.held == tuple(plain[m] for m in by_name.held)
        assert (by_id.held_counts, by_id.missed_recalls) == (by_name.held_counts, by_name.missed_recalls)


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


# --- events that store several memories or none, and the order of the steps ----------------------


def test_an_event_may_store_several_memories_or_none():
    events = [
        Event(1, START, 1, ["a", "b", "c"]),
        Event(2, START, 1, [], ("a",)),
        Event(3, START, 1, "d", ("b",)),
    ]
    run = replay(Capacity(capacity=2), events)  # LRU: c evicts a, d evicts c (b was recalled)
    assert run.stored == ("a", "b", "c", "d")
    assert run.dropped == {"a": 1, "c": 3} and run.held == ("b", "d")
    assert run.held_counts == (2, 2, 2) and run.missed_recalls == 1


def test_a_list_subclass_is_read_as_a_list_of_ids():
    class Ids(list):
        pass

    events = [Event(1, START, 1, Ids(["a", "b"])), Event(2, START, 1, "c", ("a",))]
    assert replay(KeepAll(), events).stored == ("a", "b", "c")
    assert type(check_events(events)[0].stored) is list  # the checker's own copy


@settings(max_examples=40, deadline=None)
@given(streams(max_events=30), st.sampled_from(["forget-first", "forget-last"]))
def test_a_list_of_one_id_stores_as_the_id_itself(events, order):
    listed = [event._replace(stored=[event.stored]) for event in events]
    for policy in ALL_POLICIES:
        assert replay(policy, listed, order=order) == replay(policy, events, order=order)


@settings(max_examples=40, deadline=None)
@given(streams(max_events=30))
def test_a_rule_that_drops_only_to_make_room_replays_alike_in_either_order(events):
    for policy in [
        KeepAll(),
        *(Capacity(capacity=3, rule=rule) for rule in CAPACITY_RULES),
        RandomEviction(capacity=2, seed=1),
    ]:
        assert replay(policy, events, order="forget-last") == replay(policy, events)


def test_forget_last_keeps_a_memory_recalled_on_the_turn_it_falls_due():
    # Window W = 2: m0, stored at turn 0, is due at turn 3, the turn of its recall.
    events = stream([0, 0, 0, 0, 0], {3: [0]})
    first, last = (
        replay(Window(window_size=2), events),
        replay(Window(window_size=2), events, order="forget-last"),
    )
    assert first.dropped_at("m0") == 3 and first.missed_recalls == 1
    assert last.missed_recalls == 0 and last.dropped_at("m0") is None  # recalled at 3: due at 6


def test_an_order_that_does_not_exist_is_refused_by_name():
    events = stream([0, 1])
    with pytest.raises(ValueError, match=r"order must be one of 'forget-first', 'forget-last', got 'later'"):
        replay(KeepAll(), events, order="later")
    with pytest.raises(ValueError, match=r"order must be one of"):
        ReplayRun(KeepAll(), order=None)
    saved = ReplayRun(KeepAll(), order="forget-last").feed(events).to_dict()
    assert saved["order"] == "forget-last"
    with pytest.raises(ValueError, match=r"order must be one of"):
        ReplayRun.from_dict({**saved, "order": "sideways"}, KeepAll())
