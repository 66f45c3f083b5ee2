"""Saving the conversation policies and their replays: to_dict, from_dict, resume, ReplayRun."""

import json
from datetime import timedelta, timezone, tzinfo

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversation_streams import START, grouped_streams, stream, streams
from forgetting.conversations.capacity import RANDOM_DRAW_BLOCK, Capacity, RandomEviction
from forgetting.conversations.field_rules import MemoryBank, YourMemory
from forgetting.conversations.policies import (
    Ebbinghaus,
    Event,
    KeepAll,
    ReplayRun,
    Window,
    replay,
    replay_state,
)

POLICIES = [
    KeepAll(),
    Ebbinghaus(),
    Ebbinghaus(eviction_threshold=0.3, baseline_stability=2.0, clock="days"),
    Window(window_size=3),
    Capacity(capacity=3),
    Capacity(capacity=3, rule="fifo"),
    Capacity(capacity=3, rule="lfu"),
    RandomEviction(capacity=3, seed=7),
    MemoryBank(seed=3),
    MemoryBank(seed=5, max_strength=2, max_days=5, forget_at="day"),
    MemoryBank(seed=3, forget_at="turn"),
    YourMemory(),
    YourMemory(importance=0.5, forget_at="session"),
    YourMemory(importance=0.1, base_rate=1.5, forget_at="day"),
    MemoryBank(seed=3, code="head"),
    MemoryBank(seed=4, code="intent", forget_at="turn"),
    YourMemory(clock="active"),
    YourMemory(importance=0.1, base_rate=1.5, forget_at="session", clock="active"),
]


def through_json(data):
    return json.loads(json.dumps(data))


def resumed_after(policy, events, cut, k=None):
    """``events[:cut]`` replayed, saved through JSON, restored (the policy too, from the data), the rest fed."""
    saved = through_json(ReplayRun(policy, k).feed(events[:cut]).to_dict())
    restored = type(policy).from_dict(saved["state"]["policy"])
    return ReplayRun.from_dict(saved, restored).feed(events[cut:])


# --- the round trips ---------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(streams(max_events=40), st.data())
def test_a_replay_saved_after_any_event_and_resumed_is_the_uninterrupted_replay(events, data):
    cut = data.draw(st.integers(0, len(events)), label="cut")
    k = data.draw(st.sampled_from([None, 1, 2]), label="k")
    for policy in POLICIES:
        whole = ReplayRun(policy, k).feed(events)
        resumed = resumed_after(policy, events, cut, k)
        assert resumed.result() == whole.result() == replay(policy, events, k)
        assert resumed.to_dict() == whole.to_dict()  # the same state: the same future


@settings(max_examples=40, deadline=None)
@given(grouped_streams(max_events=30), st.data())
def test_a_replay_in_either_order_of_events_storing_lists_resumes_exactly(events, data):
    cut = data.draw(st.integers(0, len(events)), label="cut")
    k = data.draw(st.sampled_from([None, 1, 2]), label="k")
    order = data.draw(st.sampled_from(["forget-first", "forget-last"]), label="order")
    for policy in POLICIES:
        whole = ReplayRun(policy, k, order=order).feed(events)
        saved = through_json(ReplayRun(policy, k, order=order).feed(events[:cut]).to_dict())
        assert ("order" in saved) == (order == "forget-last")  # the default is not written
        resumed = ReplayRun.from_dict(saved, type(policy).from_dict(saved["state"]["policy"]))
        resumed.feed(events[cut:])
        assert resumed.result() == whole.result() == replay(policy, events, k, order=order)
        assert resumed.to_dict() == whole.to_dict()


@settings(max_examples=40, deadline=None)
@given(streams(), st.data())
def test_every_state_reads_back_what_it_wrote(events, data):
    cut = data.draw(st.integers(0, len(events)), label="cut")
    for policy in POLICIES:
        _, state = replay_state(policy, events[:cut])
        written = through_json(state.to_dict())
        assert written["format"] == f"forgetting.{type(policy).__name__}.state" and written["version"] == 1
        assert written["policy"] == policy.to_dict()
        assert policy.resume(written).to_dict() == state.to_dict()


@pytest.mark.parametrize("cut", [1, RANDOM_DRAW_BLOCK - 1, RANDOM_DRAW_BLOCK, RANDOM_DRAW_BLOCK + 1, 400])
def test_the_generators_go_on_with_the_same_draws_across_blocks_of_draws(cut):
    events = stream(
        [i // 7 for i in range(2 * RANDOM_DRAW_BLOCK + 5)], {i: [i - 3] for i in range(3, 500, 4)}
    )
    for policy in (RandomEviction(capacity=40, seed=1), MemoryBank(seed=2, forget_at="turn")):
        assert resumed_after(policy, events, cut).result() == replay(policy, events)


def test_every_policy_writes_its_parameters_and_reads_them_back():
    for policy in POLICIES:
        written = through_json(policy.to_dict())
        assert written["format"] == f"forgetting.{type(policy).__name__}" and written["version"] == 1
        back = type(policy).from_dict(written)
        assert back == policy and hash(back) == hash(policy) and back.label == policy.label
    assert Capacity(capacity=4, rule="lfu").to_dict() == {
        "format": "forgetting.Capacity",
        "version": 1,
        "capacity": 4,
        "rule": "lfu",
    }
    assert type(Capacity(capacity=4).to_dict()["rule"]) is str
    seeded = RandomEviction(capacity=3, seed=np.int64(5)).to_dict()  # a numpy seed is written as an int
    assert (
        type(seeded["seed"]) is int
        and RandomEviction.from_dict(seeded).label == "Random eviction (C = 3, seed 5)"
    )
    assert KeepAll.from_dict(through_json(KeepAll().to_dict())) == KeepAll()


# --- ids and times ------------------------------------------------------------------------------------


def test_str_and_int_ids_are_saved_and_come_back_as_they_were():
    events = [
        Event(0, START, 1, 0),
        Event(1, START, 1, "0"),
        Event(2, START + timedelta(days=2), 2, np.int64(2), ["0"]),
        Event(3, START + timedelta(days=3), 3, "m", [2, 0]),
        Event(4, START + timedelta(days=4), 3, 4, ("m",)),
    ]
    for policy in POLICIES:
        for cut in range(len(events) + 1):
            resumed = resumed_after(policy, events, cut)
            assert resumed.result() == replay(policy, events)
            assert resumed.result().stored == (0, "0", 2, "m", 4)


def test_an_id_json_cannot_read_back_is_refused_by_name():
    events = [Event(0, START, 1, ("a", 1)), Event(1, START, 1, "b", [("a", 1)])]
    for policy in (KeepAll(), Ebbinghaus(), Capacity(capacity=1)):
        run = ReplayRun(policy).feed(events)
        with pytest.raises(
            ValueError, match=r"writes str and int ids only .*got the id \('a', 1\) \(tuple\)"
        ):
            run.to_dict()
    _, state = replay_state(Window(), events)
    with pytest.raises(ValueError, match=r"got the id \('a', 1\) \(tuple\)"):
        state.to_dict()


class OneHourEast(tzinfo):
    """A zone that is not a datetime.timezone (as a zoneinfo zone is not)."""

    def utcoffset(self, dt):
        return timedelta(hours=1)

    def dst(self, dt):
        return timedelta(0)

    def tzname(self, dt):
        return "E1"


def test_times_of_a_fixed_offset_are_saved_and_a_zone_is_refused():
    plain = stream([0, 0, 1, 3, 3, 40, 41], {3: [1], 4: [0], 6: [5]})
    west = timezone(timedelta(hours=-5))
    events = [event._replace(time=event.time.replace(tzinfo=west)) for event in plain]
    for policy in POLICIES:
        for cut in range(len(events) + 1):
            assert resumed_after(policy, events, cut).result() == replay(policy, events)
    zoned = [event._replace(time=event.time.replace(tzinfo=OneHourEast())) for event in plain]
    with pytest.raises(
        ValueError, match=r"writes naive times and times of a fixed offset \(datetime.timezone\) only"
    ):
        ReplayRun(YourMemory()).feed(zoned).to_dict()


# --- refusals --------------------------------------------------------------------------------------------


def test_parameters_of_another_format_or_version_or_damaged_are_refused():
    good = Capacity(capacity=3).to_dict()
    cases = [
        (
            lambda: Window.from_dict(good),
            r"^data must be a dict with format 'forgetting.Window', got format 'forgetting.Capacity'$",
        ),
        (
            lambda: Capacity.from_dict([1]),
            r"^data must be a dict with format 'forgetting.Capacity', got \[1\]$",
        ),
        (
            lambda: Capacity.from_dict({**good, "version": 2}),
            r"^data of format 'forgetting.Capacity' has version 2; this library reads version 1$",
        ),
        (
            lambda: Capacity.from_dict({**good, "version": True}),
            r"has version True; this library reads version 1",
        ),
        (
            lambda: Capacity.from_dict({key: value for key, value in good.items() if key != "rule"}),
            r"^data of format 'forgetting.Capacity' is damaged: missing entries \['rule'\], unknown entries \[\]$",
        ),
        (lambda: Capacity.from_dict({**good, "extra": 1}), r"unknown entries \['extra'\]"),
        (
            lambda: Capacity.from_dict({**good, "rule": "mru"}),
            r"^rule must be one of 'lru', 'fifo', 'lfu', got 'mru'$",
        ),
    ]
    for make, message in cases:
        with pytest.raises(ValueError, match=message):
            make()


def damaged(saved, path, value):
    """``saved`` (a JSON copy) with the entry at ``path`` set to ``value``."""
    copy = through_json(saved)
    place = copy
    for key in path[:-1]:
        place = place[key]
    place[path[-1]] = value
    return copy


EVENTS = stream([0, 0, 1, 1, 2, 2, 9], {2: [0], 4: [2, 1], 5: [0]})


@pytest.mark.parametrize(
    ("policy", "path", "value", "message"),
    [
        (
            Capacity(capacity=3),
            ("entries", 0, 1),
            -5,
            r"entries entry \['m\d', -5, \d, \d\] is not a held memory",
        ),
        (Capacity(capacity=3), ("entries",), 3, r"'forgetting.Capacity.state' is damaged \(TypeError"),
        (
            Capacity(capacity=3),
            ("entries", 0),
            ["m0", 0],
            r"entries entry must be a list of 4 entries, got \['m0', 0\]",
        ),
        (Capacity(capacity=3), ("entries", 0, 0), ["m0"], r"memory id must be a str or an int, got \['m0'\]"),
        (
            Capacity(capacity=3),
            ("generator",),
            {"bit_generator": "PCG64"},
            r"a 'LRU \(C = 3\)' store has no generator",
        ),
        (
            RandomEviction(capacity=3, seed=1),
            ("generator",),
            {"bit_generator": "MT19937"},
            r"generator is not a numpy",
        ),
        (RandomEviction(capacity=3, seed=1), ("draws",), [3], r"draw must be an int >= 0 and <= 2, got 3"),
        (Ebbinghaus(), ("items", 0, 3), 0, r"items entry .* is not a held memory"),
        (Ebbinghaus(), ("clock",), 1, r"items entry .* is not a held memory"),
        (Window(window_size=30), ("items", 1, 0), "m0", r"items must not repeat an id, got 'm0'"),
        (MemoryBank(seed=0), ("levels", 0), 3, r"level must be an int >= 0 and <= 2, got 3"),
        (MemoryBank(seed=0), ("since",), [], r"levels and since must be as long, got 7 and 0"),
        (MemoryBank(seed=0), ("previous",), None, r"previous must be the last event if one was stored"),
        (YourMemory(), ("held", 0, 3), "yesterday", r"due must be a datetime in ISO format, got 'yesterday'"),
        (YourMemory(), ("held", 0, 2), -1, r"recalls must be an int >= 0, got -1"),
        (YourMemory(), ("previous", "session"), 0, r"previous.session must be an int >= 1, got 0"),
        (
            YourMemory(),
            ("policy", "importance"),
            0.5,
            r"data is a state of the policy .*, not of 'YourMemory \(imp = 1,",
        ),
        (
            KeepAll(),
            ("version",),
            0,
            r"'forgetting.KeepAll.state' has version 0; this library reads version 1",
        ),
    ],
)
def test_a_state_of_another_policy_or_damaged_is_refused(policy, path, value, message):
    _, state = replay_state(policy, EVENTS)
    with pytest.raises(ValueError, match=message):
        policy.resume(damaged(state.to_dict(), path, value))


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("dropped", 0, 0), "m9", r"dropped must name stored ids once each, got 'm9'"),
        (("dropped", 0, 1), 99, r"drop turn must be an int >= 0 and <= 6, got 99"),
        (("counts",), [1], r"counts must hold one count per event"),
        (("dropped", 0), "m0", r"dropped entry must be a list of 2 entries, got 'm0'"),
        (("missed",), -1, r"missed must be an int >= 0, got -1"),
        (("stored", 1), "m0", r"stored must not repeat an id"),
        (("last", "stored"), "m0", r"last must be the last event, whose stored ids end the stored ones"),
        (("last", "time"), 3, r"last.time must be a datetime in ISO format, got 3"),
        (("k",), 0, r"k must be an int >= 1, got 0"),
        (
            ("state", "format"),
            "forgetting.Window.state",
            r"format 'forgetting.Capacity.state', got format 'forgetting.Window",
        ),
        (("format",), "forgetting.Replay", r"format 'forgetting.ReplayRun', got format 'forgetting.Replay'"),
    ],
)
def test_a_damaged_run_is_refused(path, value, message):
    saved = ReplayRun(Capacity(capacity=3)).feed(EVENTS).to_dict()
    with pytest.raises(ValueError, match=message):
        ReplayRun.from_dict(damaged(saved, path, value), Capacity(capacity=3))


def test_a_run_is_restored_with_the_policy_it_was_saved_with_only():
    saved = through_json(ReplayRun(Capacity(capacity=3)).feed(EVENTS).to_dict())
    with pytest.raises(ValueError, match=r"data must be a dict with format 'forgetting.Window.state'"):
        ReplayRun.from_dict(saved, Window(window_size=3))
    with pytest.raises(ValueError, match=r"data is a state of the policy .*, not of 'LRU \(C = 4\)'"):
        ReplayRun.from_dict(saved, Capacity(capacity=4))
    with pytest.raises(ValueError, match=r"^policy must be a policy \(a str label and start\(\)\), got None"):
        ReplayRun.from_dict(saved, None)

    class Unsavable:
        label = "unsavable"

        def start(self):
            return KeepAll().start()

    with pytest.raises(
        ValueError, match=r"policy must be a policy that resumes a saved state \(resume\(\)\)"
    ):
        ReplayRun.from_dict(saved, Unsavable())


def test_a_resumed_run_checks_its_events_as_the_continuation_of_the_saved_ones():
    policy = Window(window_size=2)
    run = ReplayRun.from_dict(through_json(ReplayRun(policy).feed(EVENTS[:3]).to_dict()), policy)
    before = run.to_dict()
    with pytest.raises(ValueError, match=r"^events\[0\].turn must be an int >= 3, got 2"):
        run.feed(EVENTS[2:])
    with pytest.raises(ValueError, match=r"^events\[0\].stored must be an id not stored before, got 'm1'"):
        run.feed([EVENTS[3]._replace(stored="m1")])
    with pytest.raises(ValueError, match=r"^events\[0\].session must be an int >= 2, got 1"):
        run.feed([EVENTS[3]._replace(session=1)])
    with pytest.raises(ValueError, match=r"^events\[0\].time must be a datetime, not before the previous"):
        run.feed([EVENTS[3]._replace(time=START)])
    assert run.to_dict() == before  # a refused feed changes nothing
    assert run.feed(EVENTS[3:]).result() == replay(
        policy, EVENTS
    )  # event 4 recalls m1, m2: stored before the cut


def test_a_run_stopped_by_its_policys_error_is_not_used_again():
    class Liar(KeepAll):
        def start(self):
            holder = super().start()
            holder.forget = lambda event: ["ghost"]
            return holder

    run = ReplayRun(Liar())
    with pytest.raises(ValueError, match=r"dropped memories it does not hold at turn 0"):
        run.feed(EVENTS)
    with pytest.raises(ValueError, match=r"stopped at an error of the policy: start another"):
        run.result()
    with pytest.raises(ValueError, match=r"^k must be an int >= 1, got 0"):
        ReplayRun(KeepAll(), k=0)
    with pytest.raises(
        ValueError, match=r"the state of policy 'recorder' cannot be saved \(it has no to_dict\(\)\)"
    ):

        class Recorder:
            label = "recorder"

            def start(self):
                return type(
                    "Plain",
                    (),
                    {"forget": lambda s, e: [], "recall": lambda s, m, e: None, "store": lambda s, e: []},
                )()

        ReplayRun(Recorder()).feed(EVENTS).to_dict()


def test_a_policy_saved_before_its_later_fields_existed_reads_as_their_default():
    """MemoryBank's ``code`` and YourMemory's ``clock`` came after format 1: a default policy
    writes neither (its dict is what it always was), and a dict without them reads as the default."""
    from forgetting.conversations import MemoryBank, YourMemory

    old_bank = {
        "format": "forgetting.MemoryBank",
        "version": 1,
        "seed": 3,
        "max_strength": 3,
        "max_days": 30,
        "forget_at": "session",
    }
    assert MemoryBank.from_dict(old_bank) == MemoryBank(seed=3) and MemoryBank(seed=3).to_dict() == old_bank
    head = MemoryBank(seed=3, code="head")
    assert head.to_dict()["code"] == "head" and MemoryBank.from_dict(head.to_dict()) == head
    calendar = YourMemory().to_dict()
    assert "clock" not in calendar and YourMemory.from_dict(calendar) == YourMemory()
    active = YourMemory(clock="active")
    assert YourMemory.from_dict(active.to_dict()) == active
    with pytest.raises(ValueError, match=r"missing entries \['seed'\], unknown entries \[\]"):
        MemoryBank.from_dict({k: v for k, v in old_bank.items() if k != "seed"})
