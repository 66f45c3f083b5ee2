"""The Experiment 5 corpus: memories, task types and queries (see :mod:`.corpus_file` to load one).

A corpus is the project memory of a coding assistant. It has four parts:

* ``phases`` -- always ``[before, after]``: the two halves of the run, split by the *shift*;
* ``types`` -- task types, each with a sampling weight per phase;
* ``memories`` -- sentences in the store, each with a ``role`` (general, specialist, stale,
  corrected, hitchhiker, unrelated), the phases in which it is in the store (``phases``) and
  the phases in which it is true (``valid``);
* ``queries`` -- phrasings of tasks, each of one type, with the ids of the memories the task
  needs in each phase (``needs``).

Invariants (checked by :func:`~forgetting.studies.text.corpus_file.parse_corpus`): ``valid`` is a
subset of ``phases``, and a strict subset only for the ``stale`` role; a query needs only
memories that are in the store and true in that phase; every type has a query.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

__all__ = ["PHASES", "BEFORE", "AFTER", "ROLES", "CORPUS_VERSION", "Memory", "TaskType", "Query", "Corpus"]

BEFORE = "before"
AFTER = "after"
PHASES = (BEFORE, AFTER)
"""Phase tags, in time order: the shift separates them."""
ROLES = ("general", "specialist", "stale", "corrected", "hitchhiker", "unrelated")
"""Memory roles, in the order used for grouping in tables and figures."""
CORPUS_VERSION = 1
"""The corpus file format this package reads."""


@dataclass(frozen=True)
class Memory:
    """One sentence in the store.

    Attributes
    ----------
    id, role, text : str
        Identifier, one of :data:`ROLES`, and the sentence.
    phases : tuple of str
        Phases in which it is in the store.
    valid : tuple of str
        Phases in which it is true (a subset of ``phases``).
    resembles : str or None
        Hitchhikers: the id of the useful memory they are worded like.
    """

    id: str
    role: str
    text: str
    phases: tuple[str, ...]
    valid: tuple[str, ...]
    resembles: str | None = None

    def available(self, phase: str) -> bool:
        """In the store during ``phase``."""
        return phase in self.phases

    def true_in(self, phase: str) -> bool:
        """True during ``phase``."""
        return phase in self.valid


@dataclass(frozen=True)
class TaskType:
    """A kind of task and how often it is drawn in each phase.

    ``weight`` maps each phase to a weight >= 0, not normalised
    (:meth:`Corpus.type_weights` normalises over the types).
    """

    id: str
    description: str
    weight: Mapping[str, float]


@dataclass(frozen=True)
class Query:
    """One phrasing of a task of type ``type``; ``needs[phase]`` lists the memory ids it needs."""

    id: str
    type: str
    text: str
    needs: Mapping[str, tuple[str, ...]]

    def needed_ever(self) -> tuple[str, ...]:
        """Every memory this task needs in some phase, in order of first mention."""
        return tuple(dict.fromkeys(m for phase in PHASES for m in self.needs[phase]))


@dataclass(frozen=True)
class Corpus:
    """A validated corpus; memories, types and queries in file order.

    ``path`` is where it was read from and ``sha256`` the digest of the file's bytes (both
    empty for data parsed in memory). Every per-memory array of Experiment 5 is indexed in the
    order of :attr:`memories`.
    """

    name: str
    path: str
    sha256: str
    memories: tuple[Memory, ...]
    types: tuple[TaskType, ...]
    queries: tuple[Query, ...]

    @property
    def memory_ids(self) -> list[str]:
        """Memory ids in file order."""
        return [m.id for m in self.memories]

    @property
    def query_ids(self) -> list[str]:
        """Query ids in file order."""
        return [q.id for q in self.queries]

    @property
    def roles(self) -> np.ndarray:
        """Role of every memory, as a numpy string array (for masks like ``roles == "stale"``)."""
        return np.array([m.role for m in self.memories])

    def index(self, memory_id: str) -> int:
        """Position of a memory in :attr:`memories` (and in every per-memory array).

        Raises
        ------
        KeyError
            No memory has this id.
        """
        for i, memory in enumerate(self.memories):
            if memory.id == memory_id:
                return i
        raise KeyError(f"no memory {memory_id!r} in corpus {self.name!r}")

    def memory(self, memory_id: str) -> Memory:
        """The memory with this id (``KeyError`` if none)."""
        return self.memories[self.index(memory_id)]

    def ids_with_role(self, role: str) -> list[str]:
        """Ids of the memories with ``role``, in file order."""
        return [m.id for m in self.memories if m.role == role]

    def available(self, phase: str) -> np.ndarray:
        """Boolean mask over memories: in the store during ``phase``."""
        return np.array([m.available(phase) for m in self.memories])

    def type_weights(self, phase: str) -> np.ndarray:
        """Sampling probabilities of the task types in ``phase``: ``w_t / sum_t w_t``."""
        weights = np.array([t.weight[phase] for t in self.types], dtype=np.float64)
        return np.asarray(weights / weights.sum())

    def queries_of(self, type_id: str) -> list[int]:
        """Indices of the queries of a task type, in file order."""
        return [i for i, q in enumerate(self.queries) if q.type == type_id]
