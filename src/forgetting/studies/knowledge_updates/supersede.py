"""A contradiction rule of the field's kind without an LLM: a new memory supersedes the near ones.

Mem0 asks an LLM whether a new fact ADDs to, UPDATEs or DELETEs the memories most similar to it;
Zep's Graphiti marks an edge invalid when a newer one contradicts it. Both act on the memories
nearest the new one. :class:`Supersede` keeps only that part: when a memory is stored, every held
memory of the same speaker whose rounded cosine to it is above ``threshold`` is dropped (the new
one supersedes it). No model reads the texts, so a near memory that agrees is dropped as surely as
one that contradicts: this is the rule's approximation, and its cost is measured, not assumed.

It lives in the study, not in the library's :mod:`forgetting.conversations`, because it carries
one history's cosines: it is built for one replay (:func:`supersede_for`), not from parameters
alone, so it cannot be saved and resumed the way every library policy can.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..._validate import raise_problems, real_problem
from ...conversations.policies import Event

__all__ = ["Supersede", "supersede_for"]


@dataclass(frozen=True, eq=False)
class Supersede:
    """Drop every held memory of the new one's speaker whose cosine to it is above ``threshold``.

    Parameters
    ----------
    threshold : float
        In ``[-1, 1]``; a held memory is superseded when its cosine to the new one is strictly above.
    cosines : numpy.ndarray
        ``(n, n)`` rounded cosines of the memories, in the order of ``ids``.
    ids : sequence of ids
        The memory ids, as the events store them.
    speakers : sequence, optional
        Each memory's speaker (default: one speaker for all).
    """

    threshold: float
    cosines: np.ndarray = field(repr=False)
    ids: Sequence[Hashable] = field(repr=False)
    speakers: Sequence[Hashable] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        n = len(self.ids)
        shape = np.shape(self.cosines)
        raise_problems(
            [
                real_problem("threshold", self.threshold, -1.0, 1.0),
                None
                if shape == (n, n)
                else f"cosines must be a ({n}, {n}) matrix (one row per id), got shape {shape}",
                None
                if self.speakers is None or len(self.speakers) == n
                else f"speakers must hold one speaker per id ({n}), got {len(self.speakers)}",
                None if len(set(self.ids)) == n else "ids must be distinct",
            ]
        )

    @property
    def label(self) -> str:
        return f"Supersede(threshold={self.threshold:g})"

    def start(self) -> _SupersedeState:
        position: Mapping[Hashable, int] = {mem_id: i for i, mem_id in enumerate(self.ids)}
        return _SupersedeState(self, position, {})


@dataclass
class _SupersedeState:
    policy: Supersede
    position: Mapping[Hashable, int]
    held: dict[Hashable, int]  # id -> position, in store order

    def forget(self, event: Event) -> list[Hashable]:
        return []

    def recall(self, mem_id: Hashable, event: Event) -> None:
        return None

    def store(self, event: Event) -> list[Hashable]:
        policy = self.policy
        new = self.position[event.stored]
        speakers = policy.speakers
        row = policy.cosines[new]
        gone = [
            mem_id
            for mem_id, i in self.held.items()
            if row[i] > policy.threshold and (speakers is None or speakers[i] == speakers[new])
        ]
        for mem_id in gone:
            del self.held[mem_id]
        self.held[event.stored] = new
        return gone


def supersede_for(threshold: float, cosines: np.ndarray, ids: Sequence[Hashable]) -> Supersede:
    """:class:`Supersede` over one history's memories, all of one speaker."""
    return Supersede(float(threshold), cosines, tuple(ids))
