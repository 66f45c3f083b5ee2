"""forgetting.studies.decay.policies: the article's policies are the library's rules on turns.

``DecayPolicy`` is an ``Ebbinghaus`` and ``WindowPolicy`` a ``Window``: the same parameters,
checked the same way, the same engines, the same decisions through the library's driver; what
the study adds (positional parameters, the kind, the article's label, the batch schedule) is
checked here too.
"""

from __future__ import annotations

import json
from dataclasses import fields
from datetime import datetime

import pytest

from forgetting.conversations.policies import DecayClock, Ebbinghaus, Event, ReplayRun, Window, replay
from forgetting.decay.engines import EbbinghausEngine, RecencyWindow
from forgetting.studies.decay import batch
from forgetting.studies.decay.policies import DECAY, WINDOW, DecayPolicy, EngineKind, WindowPolicy

EVENTS = [
    Event(t, datetime(2024, 1, 1), 1, f"m{t}", (f"m{t - 3}",) if t % 5 == 0 and t else ()) for t in range(60)
]


@pytest.mark.parametrize(
    "policy, rule",
    [
        (DecayPolicy(0.3, 4.0), Ebbinghaus(eviction_threshold=0.3, baseline_stability=4.0)),
        (DecayPolicy(), Ebbinghaus()),
        (WindowPolicy(7), Window(window_size=7)),
        (WindowPolicy(), Window()),
    ],
    ids=str,
)
def test_a_study_policy_is_the_library_rule_and_replays_as_it(policy, rule):
    assert isinstance(policy, type(rule))
    assert {f.name: getattr(policy, f.name) for f in fields(rule)} == {
        f.name: getattr(rule, f.name) for f in fields(rule)
    }
    mine, theirs = replay(policy, EVENTS), replay(rule, EVENTS)
    assert (mine.dropped, mine.held, mine.held_counts, mine.missed_recalls) == (
        theirs.dropped,
        theirs.held,
        theirs.held_counts,
        theirs.missed_recalls,
    )
    assert mine.dropped  # something was dropped: the comparison can fail


def test_the_engine_is_the_rule_s_engine():
    engine = DecayPolicy(0.3, 4.0).engine()
    assert isinstance(engine, EbbinghausEngine)
    assert (engine.eviction_threshold, engine.baseline_stability) == (0.3, 4.0)
    window = WindowPolicy(7).engine()
    assert isinstance(window, RecencyWindow) and window.window_size == 7


def test_kinds_labels_and_defaults():
    assert (DecayPolicy.kind, WindowPolicy.kind) == (EngineKind.DECAY, EngineKind.WINDOW)
    assert [str(k) for k in EngineKind] == ["decay", "window", "power"]
    assert DecayPolicy(0.2, 8.0) == DECAY and WindowPolicy(15) == WINDOW
    assert DecayPolicy(0.2).label == "Ebbinghaus decay (θ = 0.20)"
    assert DecayPolicy(0.25, 2.0).label == "Ebbinghaus decay (θ = 0.25, S₀ = 2)"
    assert WindowPolicy(15).label == Window(window_size=15).label == "Recency window (W = 15)"
    assert DecayPolicy(0.2).clock is DecayClock.TURNS


def test_the_batch_schedule_is_the_batch_module_s():
    assert DecayPolicy(0.3, 4.0).eviction_delays(3) == batch.decay_delays(0.3, 4.0, 3)
    assert WindowPolicy(9).eviction_delays(3) == batch.window_delays(9, 3)
    assert DecayPolicy(0.2, 2.0).grace_turns == 4


def test_saved_and_read_back():
    for policy in (DecayPolicy(0.3, 4.0), WindowPolicy(9)):
        data = policy.to_dict()
        assert data["format"] == f"forgetting.{type(policy).__name__}"
        assert type(policy).from_dict(data) == policy
        saved = json.loads(json.dumps(ReplayRun(policy).feed(EVENTS[:17]).to_dict()))
        resumed = ReplayRun.from_dict(saved, type(policy).from_dict(saved["state"]["policy"]))
        assert resumed.feed(EVENTS[17:]).result() == replay(policy, EVENTS)  # a run saved midway


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: DecayPolicy(1.5), "eviction_threshold must be"),
        (lambda: DecayPolicy(0.2, -1.0), "baseline_stability must be"),
        (lambda: DecayPolicy(0.2, clock="days"), "clock must be 'turns'.*got 'days'"),
        (lambda: WindowPolicy(0), "window_size must be"),
    ],
)
def test_bad_parameters_are_refused_when_made(make, match):
    with pytest.raises(ValueError, match=match):
        make()
