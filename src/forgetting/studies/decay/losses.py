"""Where and when foundational facts are lost: before the first recall, between two recalls, after the last.

A fact is *first lost at recall k* when it is missing at its ``k``-th scheduled recall and was
present at the ``(k-1)``-th (or, for ``k = 1``, at its registration): it was evicted in the gap
that ends at recall ``k``. A fact that is present at every recall and gone by the last turn is
lost *after the last recall*. Each fact falls in exactly one of these classes or is kept, so

``facts = before_first + between + after_last + kept``

where ``before_first`` is the count at recall 1 and ``between`` the sum over recalls 2, 3, ...
The counts come from :func:`forgetting.studies.decay.study.recall_outcomes` (the batch replay, which a
test holds to the event engines); this module only reads its rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._validate import require_int
from .policies import Policy
from .sessions import SessionConfig
from .study import recall_outcomes

__all__ = ["loss_summary", "describe_losses", "where_lost", "loss_table"]

_KEYS = ("recall", "scheduled", "found", "first_lost")


def _checked(outcomes: Sequence[Mapping[str, int]]) -> tuple[list[Mapping[str, int]], Mapping[str, int]]:
    """The per-recall rows (recall 1, 2, ... in order) and the after-the-last row of ``outcomes``."""
    if not outcomes:
        raise ValueError("outcomes must hold the rows of study.recall_outcomes, got none")
    for row in outcomes:
        if set(row) != set(_KEYS):
            raise ValueError(f"outcomes rows must have the keys {list(_KEYS)}, got {sorted(row)}")
    *by_recall, after = outcomes
    recalls = [row["recall"] for row in by_recall]
    if after["recall"] != 0 or recalls != list(range(1, len(recalls) + 1)):
        raise ValueError(
            "outcomes must be rows for recalls 1, 2, ... then recall 0 (after the last), "
            f"got recalls {[*recalls, after['recall']]}"
        )
    return by_recall, after


def loss_summary(outcomes: Sequence[Mapping[str, int]]) -> dict[str, Any]:
    """Collapse :func:`~forgetting.studies.decay.study.recall_outcomes` rows into where facts were lost.

    Returns ``facts`` (every fact: those first lost at some recall plus those that passed every
    recall), ``reached_first`` (present at their first recall), ``before_first`` (first lost at
    recall 1), ``between`` (first lost at recall 2 or later, i.e. in a gap between two recalls),
    ``after_last`` (passed every recall, gone by the end), ``lost`` (the three summed), ``kept``
    and ``by_recall``: ``{k: facts first lost at recall k}`` for every recall ``k``. Invariant:
    ``facts == before_first + between + after_last + kept``.
    """
    by_recall, after = _checked(outcomes)
    lost_at = {row["recall"]: row["first_lost"] for row in by_recall}
    before_first = lost_at.get(1, 0)
    between = sum(count for k, count in lost_at.items() if k >= 2)
    after_last = after["first_lost"]
    kept = after["scheduled"] - after_last
    facts = before_first + between + after["scheduled"]
    return {
        "facts": facts,
        "reached_first": by_recall[0]["found"] if by_recall else 0,
        "before_first": before_first,
        "between": between,
        "after_last": after_last,
        "lost": before_first + between + after_last,
        "kept": kept,
        "by_recall": lost_at,
    }


def describe_losses(
    outcomes: Sequence[Mapping[str, int]], *, from_recall: int = 1, after_last: bool = True
) -> str:
    """Where facts were first lost, in words: ``"<n> at recall <k>; ...; <m> after the last recall"``.

    One clause per recall ``k >= from_recall`` with a loss, in recall order, then (if
    ``after_last``) the facts lost after the last recall; ``"none"`` when no such fact is lost.
    ``from_recall = 2`` describes only the losses in a gap between two recalls.
    """
    by_recall, after = _checked(outcomes)
    require_int("from_recall", from_recall, minimum=1)
    clauses = [
        f"{row['first_lost']} at recall {row['recall']}"
        for row in by_recall
        if row["first_lost"] and row["recall"] >= from_recall
    ]
    if after_last and after["first_lost"]:
        clauses.append(f"{after['first_lost']} after the last recall")
    return "; ".join(clauses) or "none"


def where_lost(config: SessionConfig, n_seeds: int, policy: Policy) -> dict[str, Any]:
    """:func:`loss_summary` of ``policy`` over seeds ``0..n_seeds-1`` of ``config``, with the
    rows themselves under ``outcomes`` and their words under ``described``."""
    outcomes = recall_outcomes(config, n_seeds, policy)
    return {**loss_summary(outcomes), "outcomes": outcomes, "described": describe_losses(outcomes)}


def loss_table(configs: Mapping[str, SessionConfig], n_seeds: int, policy: Policy) -> list[dict[str, Any]]:
    """:func:`~forgetting.studies.decay.study.recall_outcomes` of ``policy`` on each named schedule, one table.

    One row per schedule and recall (``recall = 0``: after the last recall), schedule first, in
    the order of ``configs``.
    """
    return [
        {"schedule": name, "policy": policy.label, **row}
        for name, config in configs.items()
        for row in recall_outcomes(config, n_seeds, policy)
    ]
