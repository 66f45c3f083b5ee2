"""MemoryBank's and YourMemory's forgetting rules, against a direct reading of each source's code."""

import hashlib
import json
import math
import random
from datetime import datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversation_streams import START, stream, streams
from forgetting.conversations.field_rules import (
    MEMORYBANK_DAYS,
    MEMORYBANK_LEVELS,
    YOURMEMORY_FACT_RATE,
    YOURMEMORY_PRUNE,
    YOURMEMORY_REINFORCE,
    MemoryBank,
    MemoryBankCode,
    YourMemory,
    memorybank_head_retention,
    memorybank_replays,
    memorybank_retention,
    yourmemory_active_days,
    yourmemory_prune_second,
    yourmemory_reinforced,
    yourmemory_strength,
)
from forgetting.conversations.policies import Event, replay

DAY = 86400


def passes(events, forget_at):
    previous = None
    for event in events:
        if forget_at == "turn" or previous is None:
            yield event, True
        elif forget_at == "session":
            yield event, event.session != previous.session
        else:
            yield event, event.time.date() != previous.time.date()
        previous = event


def memorybank_reference(events, seed, max_strength, max_days, forget_at):
    """forget_memory.py read directly: keep with random() < exp(-t/S), t in whole days, dropped at t >= 30."""
    rng = np.random.default_rng(seed)
    held, order, dropped = {}, [], {}  # id -> [level, date]
    for event, is_pass in passes(events, forget_at):
        today = event.time.date()
        if is_pass:
            coins = rng.random(len(order))
            for mem_id, (level, since) in list(held.items()):
                days = (today - since).days
                if days >= max_days or not coins[order.index(mem_id)] < math.exp(-days / (level + 1)):
                    del held[mem_id]
                    dropped[mem_id] = event.turn
        for mem_id in event.recalled:
            if mem_id in held:
                held[mem_id] = [min(held[mem_id][0] + 1, max_strength - 1), today]
        order.append(event.stored)
        held[event.stored] = [0, today]
    return dropped, tuple(held)


def yourmemory_reference(events, importance, base_rate, threshold, forget_at):
    """decay.py and decay_job.py read directly: delete when strength < 0.05; a recall: count + 1, time reset."""
    held, dropped = {}, {}  # id -> [recalls, time]
    for event, is_pass in passes(events, forget_at):
        if is_pass:
            for mem_id, (recalls, since) in list(held.items()):
                days = (event.time - since).total_seconds() / 86400
                effective = base_rate * (1 - importance * 0.8)
                strength = round(min(1.0, importance * math.exp(-effective * days) * (1 + recalls * 0.2)), 6)
                if strength < threshold:
                    del held[mem_id]
                    dropped[mem_id] = event.turn
        for mem_id in event.recalled:
            if mem_id in held:
                held[mem_id] = [held[mem_id][0] + 1, event.time]
        held[event.stored] = [0, event.time]
    return dropped, tuple(held)


# --- MemoryBank ------------------------------------------------------------------------------------


def test_memorybank_constants_are_the_sources():
    assert (MEMORYBANK_LEVELS, MEMORYBANK_DAYS) == (3, 30)
    assert all(memorybank_retention(t, s) == math.exp(-t / s) for t in range(30) for s in (1, 2, 3))


@settings(max_examples=80, deadline=None)
@given(
    streams(),
    st.integers(0, 1000),
    st.integers(1, 4),
    st.sampled_from([1, 5, 30]),
    st.sampled_from(["session", "turn", "day"]),
)
def test_memorybank_agrees_with_a_direct_reading_of_its_code(events, seed, max_strength, max_days, forget_at):
    policy = MemoryBank(seed=seed, max_strength=max_strength, max_days=max_days, forget_at=forget_at)
    result = replay(policy, events)
    assert (result.dropped, result.held) == memorybank_reference(
        events, seed, max_strength, max_days, forget_at
    )


def test_memorybank_keeps_a_memory_of_the_day_and_drops_one_max_days_old_whatever_the_coin():
    for seed in range(20):
        assert replay(MemoryBank(seed=seed, forget_at="turn"), stream([0] * 6, {3: [0]})).dropped == {}
        assert replay(MemoryBank(seed=seed), stream([0, 30])).dropped == {"m0": 1}
        assert replay(MemoryBank(seed=seed, max_days=5), stream([0, 5])).dropped == {
            "m0": 1
        }  # t = max_days: dropped


def test_memorybank_keeps_a_recalled_memory_with_the_probability_of_its_capped_level():
    events = stream([0, 0, 0, 0, 0, 2], {i: [0] for i in range(1, 5)})  # four recalls: level capped at S = 3
    for max_strength, strength in ((3, 3), (1, 1), (9, 5)):
        kept = [
            "m0" in replay(MemoryBank(seed=seed, max_strength=max_strength), events).held
            for seed in range(60)
        ]
        # one pass after the first (which draws nothing): five coins, m0 reads the first
        expected = [np.random.default_rng(seed).random(5)[0] < math.exp(-2 / strength) for seed in range(60)]
        assert kept == expected and 0 < sum(kept) < 60


# --- YourMemory ------------------------------------------------------------------------------------


def test_yourmemory_strength_is_the_sources_formula():
    assert (YOURMEMORY_FACT_RATE, YOURMEMORY_PRUNE) == (0.16, 0.05)
    assert (
        yourmemory_strength(0, 0, 0.5, 0.16) == 0.5 and yourmemory_strength(0, 3, 1.0, 0.16) == 1.0
    )  # min(1, .)
    assert yourmemory_strength(23 * DAY, 0, 0.5, 0.16) == round(0.5 * math.exp(-0.16 * 0.6 * 23), 6)
    assert yourmemory_strength(DAY, 2, 0.5, 0.35) == round(0.5 * math.exp(-0.35 * 0.6) * 1.4, 6)


def test_yourmemory_prunes_a_fact_of_importance_half_after_24_days_as_its_comment_says():
    assert replay(YourMemory(importance=0.5), stream([0, 23])).dropped == {}
    assert replay(YourMemory(importance=0.5), stream([0, 24])).dropped == {"m0": 1}
    assert replay(YourMemory(), stream([0, 93])).dropped == {}  # importance 1: lambda_eff = 0.032 per day
    assert replay(YourMemory(), stream([0, 94])).dropped == {"m0": 1}


def test_yourmemory_a_recall_multiplies_by_one_point_two_and_restarts_the_clock():
    assert replay(YourMemory(importance=0.5), stream([0, 10, 34, 36], {1: [0]})).dropped == {"m1": 2, "m0": 3}


def test_yourmemory_keeps_a_memory_exactly_at_the_threshold():
    threshold = yourmemory_strength(10 * DAY, 0, 1.0, 0.16)
    assert replay(YourMemory(prune_threshold=threshold), stream([0, 10])).dropped == {}
    assert replay(YourMemory(prune_threshold=threshold), stream([0, 10, 11])).dropped == {"m0": 2}


def test_yourmemory_prunes_only_at_its_passes():
    one_session = stream([0, 24, 25], sessions=[1, 1, 2])
    assert replay(YourMemory(importance=0.5, forget_at="turn"), one_session).dropped == {"m0": 1}
    assert replay(YourMemory(importance=0.5, forget_at="day"), one_session).dropped == {"m0": 1}
    assert replay(YourMemory(importance=0.5, forget_at="session"), one_session).dropped == {"m0": 2}


@st.composite
def second_streams(draw, max_events=25):
    """Streams whose gaps are whole seconds, so that prune times fall between events and on them."""
    n = draw(st.integers(1, max_events))
    gaps = draw(st.lists(st.integers(0, 120 * DAY), min_size=n - 1, max_size=n - 1))
    times = [START + timedelta(seconds=sum(gaps[:i])) for i in range(n)]
    sessions = [1 + sum(g > DAY for g in gaps[:i]) for i in range(n)]
    recalls = [
        tuple(f"m{j}" for j in sorted(draw(st.sets(st.integers(0, i - 1), max_size=3)))) if i else ()
        for i in range(n)
    ]
    return [Event(i, times[i], sessions[i], f"m{i}", recalls[i]) for i in range(n)]


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(streams(), second_streams()),  # whole days, and whole seconds (prunes between and on events)
    st.sampled_from([0.1, 0.5, 1.0]),
    st.sampled_from([0.1, 0.16, 0.35, 1.5]),
    st.sampled_from([0.05, 0.2]),
    st.sampled_from(["session", "turn", "day"]),
)
def test_yourmemory_agrees_with_a_direct_reading_of_its_code(
    events, importance, base_rate, threshold, forget_at
):
    result = replay(
        YourMemory(
            importance=importance, base_rate=base_rate, prune_threshold=threshold, forget_at=forget_at
        ),
        events,
    )
    assert (result.dropped, result.held) == yourmemory_reference(
        events, importance, base_rate, threshold, forget_at
    )


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 60),
    st.floats(0.01, 1.0),
    st.floats(0.001, 2.0),
    st.floats(0.001, 0.999),
)
def test_the_prune_second_is_the_first_whole_second_below_the_threshold(
    recalls, importance, base_rate, threshold
):
    policy = YourMemory(importance=importance, base_rate=base_rate, prune_threshold=threshold)
    second = yourmemory_prune_second(recalls, policy)
    assert yourmemory_strength(second, recalls, importance, base_rate) < threshold
    assert second == 0 or yourmemory_strength(second - 1, recalls, importance, base_rate) >= threshold


def test_yourmemory_prunes_at_the_first_pass_of_the_prune_second_not_a_second_before():
    second = yourmemory_prune_second(0, YourMemory(importance=0.5))
    times = [START, START + timedelta(seconds=second - 1), START + timedelta(seconds=second)]
    events = [Event(i, time, 1, f"m{i}", ()) for i, time in enumerate(times)]
    assert replay(YourMemory(importance=0.5), events).dropped == {"m0": 2}
    assert yourmemory_reference(events, 0.5, 0.16, 0.05, "turn")[0] == {"m0": 2}


@pytest.mark.parametrize("base_rate", [1e-3, 1e-9, 1e-310])
def test_yourmemory_agrees_with_the_source_across_the_whole_range_of_dates(base_rate):
    first, last = datetime.min, datetime.max.replace(microsecond=0)
    events = [Event(0, first, 1, "m0", ()), Event(1, last, 2, "m1", ())]
    result = replay(YourMemory(base_rate=base_rate), events)
    assert (result.dropped, result.held) == yourmemory_reference(events, 1.0, base_rate, 0.05, "turn")
    assert (yourmemory_prune_second(0, YourMemory(base_rate=base_rate)) is None) == (base_rate < 1e-6)


# --- bad input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: MemoryBank(seed=-1), r"seed must be an int >= 0, got -1"),
        (lambda: MemoryBank(seed=1.0), r"seed must be an int >= 0, got 1.0"),
        (lambda: MemoryBank(seed=0, max_strength=0), r"max_strength must be an int >= 1, got 0"),
        (lambda: MemoryBank(seed=0, max_days=1.5), r"max_days must be an int >= 1, got 1.5"),
        (
            lambda: MemoryBank(seed=0, forget_at="week"),
            r"forget_at must be one of 'turn', 'session', 'day', got 'week'",
        ),
        (lambda: YourMemory(importance=0), r"importance must be a real number in \(0, 1\], got 0"),
        (lambda: YourMemory(importance=1.5), r"importance must be a real number in \(0, 1\], got 1.5"),
        (lambda: YourMemory(base_rate=0.0), r"base_rate must be a finite real number > 0, got 0.0"),
        (lambda: YourMemory(base_rate="fact"), r"base_rate must be a finite real number > 0, got 'fact'"),
        (lambda: YourMemory(prune_threshold=1), r"prune_threshold must be a real number in \(0, 1\), got 1"),
        (
            lambda: YourMemory(prune_threshold=math.nan),
            r"prune_threshold must be a real number in \(0, 1\), got nan",
        ),
        (lambda: YourMemory(forget_at=None), r"forget_at must be one of 'turn', 'session', 'day', got None"),
        (lambda: MemoryBank(seed=0, code="v1"), r"code must be one of 'v0', 'head', 'intent', got 'v1'"),
        (
            lambda: MemoryBank(seed=-1, code="head", max_strength=5, max_days=7),
            r"^seed must be an int >= 0, got -1; max_strength applies only to code 'v0' \(3869efc has no "
            r"cap\): leave it at 3, got 5; max_days applies only to code 'v0' \(3869efc has no age "
            r"drop\): leave it at 30, got 7$",
        ),
        (lambda: YourMemory(clock="wall"), r"clock must be one of 'calendar', 'active', got 'wall'"),
        (
            lambda: yourmemory_reinforced([("a", 0.9)], 1.5),
            r"threshold must be a real number in \[-1, 1\], got 1.5",
        ),
        (
            lambda: yourmemory_reinforced([("a", math.nan), ("b", "high")]),
            r"score of 'a' must be a finite real number, got nan; score of 'b' must be a finite real number, "
            r"got 'high'",
        ),
        (
            lambda: yourmemory_reinforced([("a", 0.9, 1)]),
            r"ranking entry must be an \(id, score\) pair, got \(.a., 0.9, 1\)",
        ),
        (lambda: memorybank_head_retention(1, 1, "v0"), r"code must be one of 'head', 'intent', got 'v0'"),
    ],
)
def test_bad_parameters_are_refused_with_the_argument_the_value_and_what_is_allowed(make, message):
    with pytest.raises(ValueError, match=message):
        make()


# --- MemoryBank at 3869efc ---------------------------------------------------------------------------


def memorybank_head_reference(events, seed, forget_at, intent):
    """forget_memory.py at 3869efc read directly: S from 1, +1 per recall, no cap, no age drop;
    forgotten when random() > math.exp(-t / 5*S) (or exp(-t / (5*S)) for the docstring's intent)."""
    rng = np.random.default_rng(seed)
    held, order, dropped = {}, [], {}  # id -> [S, date]
    for event, is_pass in passes(events, forget_at):
        today = event.time.date()
        if is_pass:
            coins = rng.random(len(order))
            for mem_id, (strength, since) in list(held.items()):
                t = (today - since).days
                retention = math.exp(-t / (5 * strength)) if intent else math.exp(-t / 5*strength)  # fmt: skip
                if coins[order.index(mem_id)] > retention:
                    del held[mem_id]
                    dropped[mem_id] = event.turn
        for mem_id in event.recalled:
            if mem_id in held:
                held[mem_id] = [held[mem_id][0] + 1, today]
        order.append(event.stored)
        held[event.stored] = [1, today]
    return dropped, tuple(held)


def test_the_head_formula_is_pythons_reading_of_the_source_line():
    for t in range(60):
        for strength in range(1, 12):
            assert memorybank_head_retention(t, strength, "head") == math.exp(-t / 5*strength)  # fmt: skip
            assert memorybank_head_retention(t, strength, "head") == math.exp(-t * strength / 5) or t
            assert memorybank_head_retention(t, strength, "intent") == math.exp(-t / (5 * strength))


@settings(max_examples=80, deadline=None)
@given(streams(), st.integers(0, 1000), st.sampled_from(["session", "turn", "day"]), st.booleans())
def test_memorybank_head_and_intent_agree_with_a_direct_reading_of_3869efc(events, seed, forget_at, intent):
    code = "intent" if intent else "head"
    result = replay(MemoryBank(seed=seed, forget_at=forget_at, code=code), events)
    assert (result.dropped, result.held) == memorybank_head_reference(events, seed, forget_at, intent)


def test_at_head_a_recalled_memory_fades_faster_and_at_intent_slower():
    recalled = stream([0, 0, 3], {1: [0]})  # m0 recalled on its own day; a pass three days later
    alone = stream([0, 0, 3])
    for t in range(1, 40):
        assert memorybank_head_retention(t, 2, "head") < memorybank_head_retention(t, 1, "head")
        assert memorybank_head_retention(t, 2, "intent") > memorybank_head_retention(t, 1, "intent")
    outcomes = {}
    for code in ("head", "intent"):
        for name, events in (("recalled", recalled), ("alone", alone)):
            outcomes[code, name] = {
                seed
                for seed in range(300)
                if "m0" in replay(MemoryBank(seed=seed, code=code), events).dropped
            }
    # the same coin for m0 in both streams: at head a recall only adds drops, at intent only removes them
    assert outcomes["head", "alone"] < outcomes["head", "recalled"]
    assert outcomes["intent", "recalled"] < outcomes["intent", "alone"]


def test_head_has_no_cap_and_no_age_drop():
    many = stream([0] * 8 + [1], {i: [0] for i in range(1, 8)})  # m0 recalled 7 times: S = 8
    kept = {
        seed for seed in range(200) if "m0" not in replay(MemoryBank(seed=seed, code="intent"), many).dropped
    }
    capped = {seed for seed in range(200) if "m0" not in replay(MemoryBank(seed=seed), many).dropped}
    assert capped < kept  # exp(-1/40) keeps more than v0's exp(-1/3)
    late = stream([0] * 8 + [31], {i: [0] for i in range(1, 8)})  # a pass 31 days after the last recall
    assert all("m0" in replay(MemoryBank(seed=seed), late).dropped for seed in range(50))  # v0: t >= 30
    survivors = [
        seed for seed in range(50) if "m0" not in replay(MemoryBank(seed=seed, code="intent"), late).dropped
    ]
    assert 10 < len(survivors) < 40  # exp(-31/40) = 0.46: kept by its coin, no age drop
    assert replay(MemoryBank(seed=0, code="head"), stream([0, 0])).dropped == {}  # t = 0: R = 1, kept


def test_memorybank_replays_of_head_banks_replay_once():
    events = stream([0, 0, 2, 5, 9], {2: [0], 3: [0, 1], 4: [2]})
    bank = MemoryBank(seed=4, code="head")
    assert memorybank_replays([bank, bank], events) == [replay(bank, events)] * 2
    with pytest.raises(ValueError, match=r"banks must differ only in max_strength"):
        memorybank_replays([bank, MemoryBank(seed=5, code="head")], events)


def test_the_three_codes_have_distinct_labels_and_the_default_label_is_the_published_one():
    labels = [MemoryBank(seed=0, code=code).label for code in MemoryBankCode]
    assert labels == [
        "MemoryBank (S ≤ 3, 30 days, pass per session, seed 0)",
        "MemoryBank 3869efc as written (exp(-t·S/5), S = 1 + recalls, pass per session, seed 0)",
        "MemoryBank 3869efc, intent (exp(-t/(5S)), S = 1 + recalls, pass per session, seed 0)",
    ]
    assert MemoryBank(seed=0).code is MemoryBankCode.V0


# --- YourMemory on the active-day clock -----------------------------------------------------------


def yourmemory_active_reference(events, importance, base_rate, threshold, forget_at):
    """decay_job.py and get_active_days_since read directly: days = the number of activity dates d
    with since.date() <= d <= today (the dates of the events seen, this one included)."""
    held, dropped, active = {}, {}, set()  # id -> [recalls, date]
    for event, is_pass in passes(events, forget_at):
        today = event.time.date()
        active.add(today)
        if is_pass:
            for mem_id, (recalls, since) in list(held.items()):
                count = sum(since <= d <= today for d in active)
                days = max(0.0, float(count))
                effective = base_rate * (1 - importance * 0.8)
                strength = round(min(1.0, importance * math.exp(-effective * days) * (1 + recalls * 0.2)), 6)
                if strength < threshold:
                    del held[mem_id]
                    dropped[mem_id] = event.turn
        for mem_id in event.recalled:
            if mem_id in held:
                held[mem_id] = [held[mem_id][0] + 1, today]
        held[event.stored] = [0, today]
    return dropped, tuple(held)


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(streams(), second_streams()),
    st.sampled_from([0.1, 0.5, 1.0]),
    st.sampled_from([0.1, 0.16, 0.35, 1.5]),
    st.sampled_from([0.05, 0.2]),
    st.sampled_from(["session", "turn", "day"]),
)
def test_yourmemory_active_days_agree_with_a_direct_reading_of_its_job(
    events, importance, base_rate, threshold, forget_at
):
    policy = YourMemory(
        importance=importance,
        base_rate=base_rate,
        prune_threshold=threshold,
        forget_at=forget_at,
        clock="active",
    )
    result = replay(policy, events)
    assert (result.dropped, result.held) == yourmemory_active_reference(
        events, importance, base_rate, threshold, forget_at
    )


def test_active_days_count_dates_with_events_not_calendar_days():
    sparse = stream([0, 200, 200, 400])  # three active dates over 400 calendar days
    assert replay(YourMemory(), sparse).dropped == {"m0": 1, "m1": 3, "m2": 3}
    assert replay(YourMemory(clock="active"), sparse).dropped == {}
    # importance 0.5: strength 0.5 * exp(-0.096 n) < 0.05 from n = 24 active dates
    daily = stream(list(range(30)))
    assert replay(YourMemory(importance=0.5, clock="active"), daily).dropped == {"m0": 23, "m1": 24, "m2": 25,
        "m3": 26, "m4": 27, "m5": 28, "m6": 29}  # fmt: skip
    assert yourmemory_active_days([3, 5, 8], 5, 8) == 2 and yourmemory_active_days([3, 5, 8], 4, 4) == 0


def test_reinforcement_keeps_only_scores_at_or_above_the_threshold_in_ranking_order():
    assert YOURMEMORY_REINFORCE == 0.75
    ranking = [("d3", 0.74999), ("d1", 0.9), ("d2", 0.75), ("d4", -0.2)]
    assert yourmemory_reinforced(ranking) == ("d1", "d2")
    assert yourmemory_reinforced(ranking, 0.0) == ("d3", "d1", "d2")
    assert yourmemory_reinforced([]) == ()


# --- the defaults: the published replays, unchanged ---------------------------------------------------


def _fixed_stream():
    r = random.Random(45)
    days, recalls, day = [], {}, 0
    for i in range(300):
        day += r.choice([0, 0, 0, 0, 1, 2, 5, 13])
        days.append(day)
        if i:
            recalls[i] = sorted(r.sample(range(i), min(i, r.choice([0, 1, 2, 5]))))
    return stream(days, recalls)


STORED = {  # sha256 of [sorted dropped items, held] before MemoryBankCode and YourMemoryClock (2a5129e)
    "MemoryBank (S ≤ 3, 30 days, pass per session, seed 0)": "1cd5d35a3d98f11b",
    "MemoryBank (S ≤ 3, 30 days, pass per turn, seed 7)": "04080a6f5d85b8f7",
    "YourMemory (imp = 1, λ = 0.16, prune < 0.05, pass per turn)": "111a25eb4e2dbd9d",
    "YourMemory (imp = 0.5, λ = 0.16, prune < 0.05, pass per session)": "f7e5e57285a343f2",
}


def test_the_default_rules_replay_a_fixed_stream_as_before_the_new_options():
    events = _fixed_stream()
    policies = [
        MemoryBank(seed=0),
        MemoryBank(seed=7, forget_at="turn"),
        YourMemory(),
        YourMemory(importance=0.5, forget_at="session"),
    ]
    for policy in policies:
        result = replay(policy, events)
        assert result.dropped  # the stream is long enough for every rule to drop
        digest = json.dumps([sorted(result.dropped.items()), list(result.held)]).encode()
        assert hashlib.sha256(digest).hexdigest()[:16] == STORED[policy.label]
        explicit = type(policy).from_dict({**policy.to_dict()})
        assert replay(explicit, events) == result
    assert MemoryBank(seed=0, code="v0") == MemoryBank(seed=0)
    assert YourMemory(clock="calendar") == YourMemory()


@settings(max_examples=100, deadline=None)
@given(second_streams(), st.integers(1, 4), st.data())
def test_filtering_a_scored_ranking_then_top_k_is_the_sources_top_k_then_threshold(events, k, data):
    """retrieve.py: the top k of what the store holds, then reinforce those with similarity >= 0.75."""
    scored = []  # per event: every earlier memory with a score, best first
    for event in events:
        scores = [data.draw(st.sampled_from([0.2, 0.6, 0.75, 0.8, 0.95])) for _ in range(event.turn)]
        scored.append(
            sorted(zip((f"m{j}" for j in range(event.turn)), scores, strict=True), key=lambda p: -p[1])
        )
    filtered = [e._replace(recalled=yourmemory_reinforced(r)) for e, r in zip(events, scored, strict=True)]
    result = replay(YourMemory(importance=0.5), filtered, k)
    held, dropped = {}, {}  # id -> [recalls, time]
    for event, ranking in zip(events, scored, strict=True):
        for mem_id, (recalls, since) in list(held.items()):
            if yourmemory_strength(int((event.time - since).total_seconds()), recalls, 0.5, 0.16) < 0.05:
                del held[mem_id]
                dropped[mem_id] = event.turn
        top = [(mem_id, score) for mem_id, score in ranking if mem_id in held][:k]
        for mem_id in (mem_id for mem_id, score in top if score >= YOURMEMORY_REINFORCE):
            held[mem_id] = [held[mem_id][0] + 1, event.time]
        held[event.stored] = [0, event.time]
    assert (result.dropped, result.held) == (dropped, tuple(held))
