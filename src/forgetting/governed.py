"""A governed memory: a decay working set whose memories outcome evidence can deprecate.

:class:`GovernedMemory` is the book's combined answer in one object, the ``combined`` policy of
:mod:`forgetting.studies.governance.policies` for any memories: the Ebbinghaus engine
(:class:`~forgetting.decay.EbbinghausEngine`) keeps what is recalled and evicts what is not, and
Memory Worth (:class:`~forgetting.worth.MemoryWorth`) deprecates a memory whose retrievals keep
travelling with failures. One call per retrieval (:meth:`GovernedMemory.retrieve`) and one per
outcome (:meth:`GovernedMemory.outcome`) drive both.

Within a turn the order is the chapter's: stores, then each retrieval (a recall of every
retrieved memory that is held), its outcome (the Memory Worth update of what was retrieved),
the deprecation of every memory of that outcome whose class is now ``low-value``
(``h+ + h- >= min_evidence`` and ``MW = h+ / (h+ + h-) <= low_threshold``), and last the
engine's eviction: a memory is evicted at the end of the first turn at which its retention
``exp(-t / S)`` is below ``eviction_threshold``. A deprecated memory is never retrieved again and
is no longer held; it is never stored again either (a new fact needs a new id).

Time moves only with the calls: each takes the current ``turn`` (an int, never earlier than the
last call's). A call at a later turn first ends the turns before it (the engine's ``step(turn -
1)``), so stepping every turn is optional; :meth:`GovernedMemory.step` ends a turn explicitly.
"""

from __future__ import annotations

import enum
from collections.abc import Hashable, Sequence
from typing import Any, Self, cast

import numpy as np

from ._validate import (
    bool_problem,
    check_header,
    id_problem,
    int_problem,
    json_header,
    json_id,
    plain_id,
    raise_problems,
    reading,
    shown,
)
from .decay import DEFAULT_BASELINE_STABILITY, DEFAULT_EVICTION_THRESHOLD, EbbinghausEngine
from .decay.curves import decay_problems
from .worth import (
    DEFAULT_HIGH_THRESHOLD,
    DEFAULT_LOW_THRESHOLD,
    DEFAULT_MIN_EVIDENCE,
    DEFAULT_PRIOR,
    LOW_VALUE,
    MemoryWorth,
    WorthClass,
)
from .worth.taxonomy import taxonomy_problems

__all__ = ["GovernedMemory", "MemoryStatus", "FORMAT", "FORMAT_VERSION"]

FORMAT = "forgetting.GovernedMemory"
"""The ``"format"`` entry of :meth:`GovernedMemory.to_dict`."""
FORMAT_VERSION = 1
"""The ``"version"`` entry of :meth:`GovernedMemory.to_dict`; :meth:`GovernedMemory.from_dict`
reads this version only."""

_CLOCK_KEY = "clock"
"""An engine id no memory has (memories are filed under the digits of their index): a recall of
it moves the restored engine's clock and touches nothing."""


class MemoryStatus(enum.StrEnum):
    """Where a stored memory is."""

    HELD = "held"
    """In the working set and not deprecated: retrievable."""
    DEPRECATED = "deprecated"
    """Deprecated by outcome evidence (whether or not the engine has evicted it yet)."""
    EVICTED = "evicted"
    """Evicted by decay and not deprecated (it may be stored again)."""


class GovernedMemory:
    """A decay working set whose memories Memory Worth can deprecate (module docstring).

    Parameters
    ----------
    eviction_threshold : float, default 0.20
        ``theta`` in (0, 1): a memory is evicted at the first turn its retention
        ``exp(-t / S)`` is below it.
    baseline_stability : float, default 8.0
        ``S0 > 0``, in turns; each recall multiplies ``S`` by ``1 + ln(1 + n)`` (``n`` touches).
    prior : float, default 0.5
        Memory Worth before any outcome, in [0, 1].
    min_evidence : float, default 5.0
        Outcomes ``h+ + h-`` a memory needs before it can be deprecated, >= 0.
    high_threshold : float, default 0.7
        Worth at or above which a memory is ``high-value``, in [0, 1].
    low_threshold : float, default 0.3
        Deprecate when ``MW <= low_threshold`` (in [0, 1], ``< high_threshold``).

    The defaults are the governance chapter's: the engine's ``theta`` and Memory Worth's
    taxonomy as the ``combined`` policy uses them.

    Notes
    -----
    Memory ids are any hashable value but a ``bool`` or a value not equal to itself (NaN);
    numpy scalars are stored as the Python values they equal. :meth:`to_dict` writes ``str`` and
    ``int`` ids exactly and refuses any other id with a ``ValueError`` naming it (JSON has no
    other key that reads back as the same value). Every call is checked completely first: a
    refused call (``ValueError`` naming the argument and the value, every problem at once)
    changes nothing.

    Invariants: a memory is in exactly one of :class:`MemoryStatus` once stored; a deprecated
    memory stays deprecated; decisions equal the ``combined`` policy's on the same events.

    Examples
    --------
    >>> memory = GovernedMemory()
    >>> memory.store("deploy-target", turn=1, content="kubernetes")
    >>> memory.retrieve(["deploy-target"], turn=3)
    ['deploy-target']
    >>> for turn in range(4, 9):  # one call per retrieval, one per outcome
    ...     used = memory.retrieve(["deploy-target"], turn=turn)
    ...     newly_deprecated = memory.outcome(used, success=False, turn=turn)
    >>> newly_deprecated, memory.counters("deploy-target")
    (['deploy-target'], (0.0, 5.0))
    >>> memory.status("deploy-target"), memory.deprecated(), memory.held()
    (<MemoryStatus.DEPRECATED: 'deprecated'>, {'deploy-target': 8}, [])
    >>> memory.retrieve(["deploy-target"], turn=9)
    []
    """

    def __init__(
        self,
        *,
        eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
        baseline_stability: float = DEFAULT_BASELINE_STABILITY,
        prior: float = DEFAULT_PRIOR,
        min_evidence: float = DEFAULT_MIN_EVIDENCE,
        high_threshold: float = DEFAULT_HIGH_THRESHOLD,
        low_threshold: float = DEFAULT_LOW_THRESHOLD,
    ) -> None:
        raise_problems(
            [
                *decay_problems(eviction_threshold, baseline_stability),
                *taxonomy_problems(prior, min_evidence, high_threshold, low_threshold),
            ]
        )
        self._engine = EbbinghausEngine(
            eviction_threshold=float(eviction_threshold), baseline_stability=float(baseline_stability)
        )
        self._worth = MemoryWorth(
            prior=float(prior),
            min_evidence=float(min_evidence),
            high_threshold=float(high_threshold),
            low_threshold=float(low_threshold),
        )
        self._ids: list[Hashable] = []  # every id ever stored, in order of first store
        self._index: dict[Hashable, int] = {}  # id -> its place in _ids (the engine files it as str)
        self._contents: list[str] = []
        self._deprecated: dict[Hashable, int] = {}  # id -> turn of deprecation, in that order

    # --- settings ---------------------------------------------------------------------------
    def settings(self) -> dict[str, float]:
        """The keyword arguments this memory was made with (as floats)."""
        worth = self._worth
        return {
            "eviction_threshold": self._engine.eviction_threshold,
            "baseline_stability": self._engine.baseline_stability,
            "prior": worth.prior,
            "min_evidence": worth.min_evidence,
            "high_threshold": worth.high_threshold,
            "low_threshold": worth.low_threshold,
        }

    @property
    def last_turn(self) -> int:
        """The turn of the latest accepted call (0 before any); no call may go before it."""
        return self._engine.last_turn

    # --- checks -----------------------------------------------------------------------------
    def _turn_problem(self, turn: Any) -> str | None:
        problem = int_problem("turn", turn, minimum=0, allow_numpy=True)
        if problem is None and int(turn) < self.last_turn:
            return f"turn must not go backwards: got turn={shown(turn)} after turn {self.last_turn}"
        return problem

    def _ids_problems(self, name: str, mem_ids: Any) -> tuple[list[str], list[Hashable]]:
        """The problems of a sequence of distinct stored ids, and the ids (as stored) if none."""
        flat = isinstance(mem_ids, np.ndarray) and mem_ids.ndim == 1
        if not flat and (isinstance(mem_ids, (str, bytes)) or not isinstance(mem_ids, Sequence)):
            return [
                f"{name} must be a sequence of memory ids (list, tuple or 1-d array), got {shown(mem_ids)}"
            ], []
        ids = [plain_id(m) for m in mem_ids]
        bad = [m for m in ids if id_problem(name, m) is not None]
        if bad:
            return [
                f"{name} must hold hashable ids, none a bool or a value not equal to itself (True would be "
                f"the id 1, a NaN is never found again), got {shown(bad)}"
            ], []
        problems = []
        unknown = [m for m in ids if m not in self._index]
        if unknown:
            problems.append(f"{name} must be ids of stored memories, got never-stored {shown(unknown)}")
        if len(set(ids)) != len(ids):
            repeated = list(dict.fromkeys(m for m in ids if ids.count(m) > 1))
            problems.append(f"{name} must not repeat an id, got duplicates {shown(repeated)}")
        return problems, ids

    def _advance(self, turn: int) -> None:
        """End the turns before ``turn``: the engine's eviction up to ``turn - 1``."""
        if turn > self._engine.last_turn:
            self._engine.step(turn - 1)

    def _key(self, mem_id: Hashable) -> str:
        return str(self._index[mem_id])

    def _is_held(self, mem_id: Hashable) -> bool:
        return mem_id not in self._deprecated and self._engine.is_present(self._key(mem_id))

    # --- events -----------------------------------------------------------------------------
    def store(self, mem_id: Hashable, *, turn: int, content: str = "") -> None:
        """Add a memory at ``turn`` (its retention starts at 1, its stability at ``S0``).

        ``ValueError`` (nothing changed) for a bad id, ``turn`` or ``content`` (a ``str``), an id
        held now, or an id once deprecated. An evicted id may be stored again: it keeps its Memory
        Worth counters (the evidence is about the id).
        """
        mem_id = plain_id(mem_id)
        problems = [
            id_problem("mem_id", mem_id),
            self._turn_problem(turn),
            None if type(content) is str else f"content must be a str, got {shown(content)}",
        ]
        if problems[0] is None:
            if mem_id in self._deprecated:
                problems.append(
                    f"mem_id {shown(mem_id)} was deprecated at turn {self._deprecated[mem_id]} and is not "
                    f"stored again (store the new fact under a new id)"
                )
            elif mem_id in self._index and self._engine.is_present(self._key(mem_id)):
                problems.append(f"mem_id {shown(mem_id)} is already held")
        raise_problems(problems)
        turn = int(turn)
        self._advance(turn)
        if mem_id not in self._index:
            self._index[mem_id] = len(self._ids)
            self._ids.append(mem_id)
            self._contents.append(content)
        else:
            self._contents[self._index[mem_id]] = content
        self._engine.register(self._key(mem_id), content, turn)

    def retrieve(self, mem_ids: Sequence[Hashable], *, turn: int) -> list[Hashable]:
        """Recall (reinforce) every memory of ``mem_ids`` that is held; return those ids, in order.

        ``mem_ids`` are distinct ids of stored memories (what a search returned, possibly empty);
        an evicted or deprecated one is left out of the answer, silently. ``ValueError`` (nothing
        changed) for a bad sequence, an id never stored, a repeated id or a bad ``turn``.
        """
        problems, ids = self._ids_problems("mem_ids", mem_ids)
        raise_problems([*problems, self._turn_problem(turn)])
        turn = int(turn)
        self._advance(turn)
        held = [m for m in ids if self._is_held(m)]
        engine = self._engine
        for mem_id in held:
            engine.recall(self._key(mem_id), turn)
        engine.recall(_CLOCK_KEY, turn)  # the clock moves even when nothing is held
        return held

    def outcome(self, mem_ids: Sequence[Hashable], *, success: bool, turn: int) -> list[Hashable]:
        """Record the outcome of a task that used ``mem_ids``; return the ids it deprecated.

        Each id's ``h+`` (``success``) or ``h-`` grows by 1; then each of them that is not yet
        deprecated and whose class is now ``low-value`` (``h+ + h- >= min_evidence`` and
        ``h+ / (h+ + h-) <= low_threshold``) is deprecated at ``turn``. ``mem_ids`` are distinct
        ids of stored memories (normally what :meth:`retrieve` returned; empty: nothing changes),
        ``success`` a ``bool`` (``-1`` is truthy: numbers are refused). ``ValueError`` (nothing
        changed) otherwise.
        """
        problems, ids = self._ids_problems("mem_ids", mem_ids)
        raise_problems([*problems, bool_problem("success", success), self._turn_problem(turn)])
        turn = int(turn)
        self._advance(turn)
        self._engine.recall(_CLOCK_KEY, turn)
        if not ids:
            return []
        worth = self._worth
        worth.update(ids, bool(success))
        deprecated = [m for m in ids if m not in self._deprecated and worth.classify(m) == LOW_VALUE]
        for mem_id in deprecated:
            self._deprecated[mem_id] = turn
        return deprecated

    def step(self, turn: int) -> list[Hashable]:
        """End ``turn``: evict every memory whose retention is below ``theta`` at or before it.

        Returns the ids that left the working set (held until now), in order of their store.
        ``ValueError`` (nothing changed) for a bad ``turn``.
        """
        raise_problems([self._turn_problem(turn)])
        evicted = self._engine.step(int(turn))
        ids = (self._ids[int(key)] for key in evicted)
        return [m for m in ids if m not in self._deprecated]

    # --- reading ----------------------------------------------------------------------------
    def _known(self, mem_id: Any) -> Hashable:
        mem_id = plain_id(mem_id)
        raise_problems([id_problem("mem_id", mem_id)])
        if mem_id not in self._index:
            raise ValueError(f"mem_id must be the id of a stored memory, got never-stored {shown(mem_id)}")
        return cast(Hashable, mem_id)

    def status(self, mem_id: Hashable) -> MemoryStatus:
        """:class:`MemoryStatus` of a stored memory (``ValueError`` for an id never stored)."""
        mem_id = self._known(mem_id)
        if mem_id in self._deprecated:
            return MemoryStatus.DEPRECATED
        return MemoryStatus.HELD if self._engine.is_present(self._key(mem_id)) else MemoryStatus.EVICTED

    def held(self) -> list[Hashable]:
        """Ids in the working set and not deprecated, in order of their (latest) store."""
        return [
            m for m in (self._ids[int(k)] for k in self._engine.present_ids()) if m not in self._deprecated
        ]

    def __len__(self) -> int:
        """How many memories are held (:meth:`held`)."""
        engine = self._engine
        return engine.working_set_size() - sum(engine.is_present(self._key(m)) for m in self._deprecated)

    def deprecated(self) -> dict[Hashable, int]:
        """Each deprecated id and the turn it was deprecated at, in order of deprecation."""
        return dict(self._deprecated)

    def content(self, mem_id: Hashable) -> str:
        """What a stored memory holds (its latest store's ``content``)."""
        return self._contents[self._index[self._known(mem_id)]]

    def counters(self, mem_id: Hashable) -> tuple[float, float]:
        """``(h+, h-)`` of a stored memory (``(0.0, 0.0)`` before its first outcome)."""
        return self._worth.counters(self._known(mem_id))

    def worth(self, mem_id: Hashable) -> float:
        """Memory Worth ``h+ / (h+ + h-)`` of a stored memory (the prior before any outcome)."""
        return self._worth.worth(self._known(mem_id))

    def worth_class(self, mem_id: Hashable) -> WorthClass:
        """``high-value``, ``uncertain``, ``mixed`` or ``low-value`` (:func:`~forgetting.worth.worth_class`)."""
        return self._worth.classify(self._known(mem_id))

    def retention(self, mem_id: Hashable, turn: int) -> float:
        """Retention ``exp(-(turn - last touch) / S)`` of a memory in the engine (held, or deprecated
        and not yet evicted) at ``turn`` (no earlier than its last touch); ``ValueError`` otherwise."""
        key = self._key(self._known(mem_id))
        if not self._engine.is_present(key):
            raise ValueError(f"mem_id {shown(mem_id)} was evicted: it has no retention")
        return self._engine.retention(key, turn)

    # --- JSON -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The whole state as JSON-safe data (``json.dumps`` needs nothing else).

        ``{"format", "version", "settings", "turn", "memories": [[id, content], ...] (order of
        first store), "working_set": [[index, created turn, last touch, touches], ...] (the
        engine's items, in registration order), "worth": [[index, h+, h-], ...] (order of first
        outcome), "outcomes": n, "deprecated": [[index, turn], ...]}``; an ``index`` is a
        place in ``memories``. Floats are written as Python floats (JSON keeps them exactly).
        ``ValueError`` naming the first id that is neither a ``str`` nor an ``int``.
        """
        for mem_id in self._ids:
            json_id(mem_id)
        engine, worth, index = self._engine, self._worth, self._index
        items = (engine.item(key) for key in engine.present_ids())
        return {
            **json_header(FORMAT, FORMAT_VERSION),
            "settings": self.settings(),
            "turn": engine.last_turn,
            "memories": [[m, c] for m, c in zip(self._ids, self._contents)],
            "working_set": [[int(i.mem_id), i.created_turn, i.last_touched, i.touch_count] for i in items],
            "worth": [[index[m], *worth.counters(m)] for m in worth.memory_ids()],
            "outcomes": worth.n_episodes_,
            "deprecated": [[index[m], t] for m, t in self._deprecated.items()],
        }

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """The memory :meth:`to_dict` wrote (after ``json.loads`` too): same state, same future.

        The engine is rebuilt by replaying each held item's store and recalls (its stability is a
        function of its touches), the counters by adding each memory's ``h+`` and ``h-`` at once
        (``0.0 + h`` is ``h`` exactly). ``ValueError`` for another format or version, or data that
        is not what :meth:`to_dict` writes.
        """
        checked = check_header(data, FORMAT, FORMAT_VERSION)
        with reading("GovernedMemory"):
            memory = cls(**checked["settings"])
            memory._restore(checked)
        return memory

    def _place(self, i: Any) -> int:
        """``i`` if it is the index of a memory (an int in ``[0, len(memories))``), else ``ValueError``."""
        raise_problems([int_problem("memory index", i, minimum=0, maximum=len(self._ids) - 1)])
        return int(i)

    def _restore(self, data: dict[str, Any]) -> None:
        """Fill a fresh memory from ``data`` (checked by :meth:`from_dict`'s caller for its shape)."""
        problems = []
        for mem_id, content in data["memories"]:
            problem = id_problem("memory id", mem_id)
            if problem is None and type(mem_id) is not str and type(mem_id) is not int:
                problem = f"memory ids must be str or int, got {shown(mem_id)}"
            if problem is None and mem_id in self._index:
                problem = f"memory ids must be distinct, got {shown(mem_id)} twice"
            if problem is None and type(content) is not str:
                problem = f"contents must be str, got {shown(content)}"
            if problem is not None:
                problems.append(problem)
                break
            self._index[mem_id] = len(self._ids)
            self._ids.append(mem_id)
            self._contents.append(content)
        raise_problems(problems)
        turn = data["turn"]
        raise_problems([int_problem("turn", turn, minimum=0)])
        # Each held item: registered at its turn, recalled touches - 2 times then and once at its
        # last touch; sorted by turn, registrations first, in registration order.
        events: list[tuple[int, int, int, int]] = []
        for position, (i, created, touched, touches) in enumerate(data["working_set"]):
            ok = all(type(v) is int for v in (i, created, touched, touches))
            if not (ok and 0 <= i < len(self._ids) and 0 <= created <= touched <= turn and touches >= 1):
                raise ValueError(f"working_set entry {shown([i, created, touched, touches])} is not an item")
            if touches == 1 and touched != created:
                raise ValueError(f"working_set entry {shown([i, created, touched, touches])} is not an item")
            events.append((created, 0, position, i))
            events += [(created, 1, position, i)] * max(touches - 2, 0)
            if touches >= 2:
                events.append((touched, 1, position, i))
        engine = self._engine
        for event_turn, kind, _, i in sorted(events):
            if kind == 0:
                engine.register(str(i), self._contents[i], event_turn)
            else:
                engine.recall(str(i), event_turn)
        engine.recall(_CLOCK_KEY, turn)
        for i, positive, negative in data["worth"]:
            mem_id = self._ids[self._place(i)]
            self._worth.update([mem_id], True, weights=[positive]).update([mem_id], False, weights=[negative])
        outcomes = data["outcomes"]
        raise_problems([int_problem("outcomes", outcomes, minimum=0)])
        self._worth.n_episodes_ = outcomes
        for i, deprecated_turn in data["deprecated"]:
            raise_problems([int_problem("deprecated turn", deprecated_turn, minimum=0, maximum=turn)])
            self._deprecated[self._ids[self._place(i)]] = deprecated_turn
