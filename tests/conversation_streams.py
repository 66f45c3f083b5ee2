"""Small hand-made event streams for the policy tests (invented; no LoCoMo data)."""

from __future__ import annotations

from datetime import datetime, timedelta

from hypothesis import strategies as st

from forgetting.conversations.policies import Event

START = datetime(2023, 5, 8, 13, 56)


def stream(days, recalls=None, sessions=None):
    """Event ``i`` stores ``m<i>`` on day ``days[i]`` and recalls ``m<j>`` for ``j`` in ``recalls[i]``.

    A session starts whenever the day changes, unless ``sessions`` is given.
    """
    recalls = recalls or {}
    events, session = [], 1
    for i, day in enumerate(days):
        if sessions is not None:
            session = sessions[i]
        elif i and day != days[i - 1]:
            session += 1
        recalled = tuple(f"m{j}" for j in recalls.get(i, ()))
        events.append(Event(i, START + timedelta(days=day), session, f"m{i}", recalled))
    return events


@st.composite
def streams(draw, max_events=25):
    """Streams of 1..max_events events: non-decreasing days, each event recalling earlier memories."""
    n = draw(st.integers(1, max_events))
    gaps = draw(st.lists(st.sampled_from([0, 0, 0, 1, 2, 5, 13, 31]), min_size=n, max_size=n))
    days = [sum(gaps[: i + 1]) - gaps[0] for i in range(n)]
    recalls = {i: draw(st.sets(st.integers(0, i - 1), max_size=3)) for i in range(1, n)}
    return stream(days, {i: sorted(r) for i, r in recalls.items()})


@st.composite
def grouped_streams(draw, max_events=25):
    """:func:`streams` with runs of consecutive events merged into one that stores the list of
    their ids (the first event's turn, time, session and recalls, less the ids the run stores),
    some followed by an event storing nothing (``[]``) at the run's last turn."""
    events = draw(streams(max_events))
    out, i = [], 0
    while i < len(events):
        group = events[i : i + draw(st.integers(1, 3), label="run length")]
        stored = [event.stored for event in group]
        recalled = tuple(mem_id for mem_id in group[0].recalled if mem_id not in stored)
        out.append(group[0]._replace(stored=stored, recalled=recalled))
        if len(group) > 1 and draw(st.booleans(), label="then an empty event"):
            out.append(group[-1]._replace(stored=[], recalled=()))
        i += len(group)
    return out
