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
