"""A governed memory: a decay working set whose memories outcome evidence can deprecate.

:class:`GovernedMemory` is the governance chapter (``beyond-governance``) in one object, for any
memories: the Ebbinghaus engine (:class:`~forgetting.decay.EbbinghausEngine`) keeps what is
recalled and evicts what is not, and a :class:`DeprecationRule` retires a memory on the outcomes
of the tasks that used it. One call per retrieval (:meth:`GovernedMemory.retrieve`) and one per
outcome (:meth:`GovernedMemory.outcome`) drive both. Each rule plays exactly as one of the
chapter's policies (:mod:`forgetting.studies.governance.policies`; tested on the first 8 to 12 of
its published sessions, on 2 or 3 sessions of each value of its sweeps, and on generated ones):

* ``WORTH`` (policy ``combined``, the default): deprecate a retrieved memory whose Memory Worth
  (:class:`~forgetting.worth.MemoryWorth`) is low-value, ``h+ + h- >= min_evidence`` and
  ``MW = h+ / (h+ + h-) <= low_threshold``. It needs nothing but outcomes, but it reads an
  association: in the chapter's world a true fact retrieved together with the stale one it
  replaces shares its failures, and at the published parameters the true fact survived in
  0.677 of 1000 sessions (the stale one was removed in all, after 30.6 turns on average).
* ``DISCOUNTED`` (policy ``discounted``): the same rule on counters discounted by ``discount``
  per outcome (:class:`~forgetting.worth.DiscountedMemoryWorth`), so old outcomes fade. At the
  chapter's ``discount = 0.9`` the true fact survived in 0.893 of the sessions and the stale one
  went after 13.8 turns; a discounted counter stays below ``1 / (1 - discount)`` (up to
  rounding), so at ``discount < 1 - 1 / min_evidence`` nothing is ever deprecated; at equality
  rounding can reach ``min_evidence`` (``discount = 0.8``, ``min_evidence = 5``: after 158
  straight failures of one memory).
* ``EFFECT`` (policy ``effect``): deprecate a memory once an interval on its *effect* lies below
  0 (:func:`~forgetting.worth.harmful`, ``effect_z``): the success rate of its contrast tasks
  that retrieved it minus that of those that did not. A contrast task is one whose retrieval
  among ``candidates`` was drawn independently of how the task would go (see
  :meth:`GovernedMemory.outcome`); without such tasks it never deprecates. At ``effect_z =
  2.576`` it kept the true fact and removed the stale one in all 1000 sessions (after 21.2
  turns), but it is checked after every contrast task, so its 99 % is (approximately) a promise
  about one look, not about a stream: in the chapter's world where no fact matters it deprecated
  the true fact in 0.055 of them.
* ``SEQUENTIAL`` (policy ``sequential``): deprecate once a sequential test of "the memory does
  not harm" rejects at level ``alpha`` (:class:`~forgetting.worth.HarmTest`): over a whole
  stream, a memory whose effect is >= 0 is deprecated with probability at most ``alpha``,
  *provided* each candidate of a contrast task is retrieved with the known chance ``(1 +
  co_retrieval) / 2``. At ``alpha = 0.01`` it kept the true fact and removed the stale one in
  all 1000 sessions, later than the interval (after 37.1 turns); where no fact matters it lost
  the true fact in 0.009 of them.

Which to use, as far as the chapter shows (one synthetic world, two contradicting facts):
``WORTH`` or ``DISCOUNTED`` when nothing about retrieval is random, knowing that a useful memory
retrieved with a harmful one can be deprecated with it; ``EFFECT`` or ``SEQUENTIAL`` when which
of the contradicting memories a task gets back is a coin of its own, or is made one (the
chapter's omission: withhold one of the pair at random, which is ``co_retrieval = 1 - omega``);
``SEQUENTIAL`` when losing a harmless memory must stay rare over the whole stream, at the price
of slower deprecation. The evidence rules need that coin to be independent of the outcome: in
the chapter's world where no fact matters, a retrieval that followed the task's difficulty
made them deprecate the true fact in 0.527 (``EFFECT``) and 0.186 (``SEQUENTIAL``, ``alpha =
0.01``) of the sessions at its strongest confound.

Within a turn the order is the chapter's: stores, then each retrieval (a recall of every
retrieved memory that is held), its outcome (the evidence update and the rule's deprecations),
and last the engine's eviction: a memory is evicted at the end of the first turn at which its
retention ``exp(-t / S)`` is below ``eviction_threshold``. A deprecated memory is never
retrieved again and is no longer held; it is never stored again either (a new fact needs a new
id).

Time moves only with the calls: each takes the current ``turn`` (an int, never earlier than the
last call's). A call at a later turn first ends the turns before it (the engine's ``step(turn -
1)``), so stepping every turn is optional; :meth:`GovernedMemory.step` ends a turn explicitly.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Self, cast

import numpy as np

from ._validate import (
    bool_problem,
    id_problem,
    int_problem,
    json_header,
    json_id,
    plain_id,
    raise_problems,
    real_problem,
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
    DiscountedMemoryWorth,
    MemoryWorth,
    WorthClass,
)
from .worth.discounted import discount_problem
from .worth.evidence import (
    DEFAULT_ALPHA,
    DEFAULT_EFFECT_Z,
    SEQUENTIAL_SHARES,
    EffectArms,
    HarmTest,
    _float_factors,
    alpha_problem,
    effect_z_problem,
    retrieval_chance,
)
from .worth.taxonomy import taxonomy_problems

__all__ = [
    "GovernedMemory",
    "MemoryStatus",
    "DeprecationRule",
    "GOVERNED_DISCOUNT",
    "FORMAT",
    "FORMAT_VERSION",
]

FORMAT = "forgetting.GovernedMemory"
"""The ``"format"`` entry of :meth:`GovernedMemory.to_dict`."""
FORMAT_VERSION = 2
"""The ``"version"`` entry of :meth:`GovernedMemory.to_dict`; :meth:`GovernedMemory.from_dict`
reads this version and version 1 (written before the rules: a ``WORTH`` memory)."""
GOVERNED_DISCOUNT = 0.9
"""``discount`` of the ``DISCOUNTED`` rule by default: the governance chapter's ``gamma`` (Memory
Worth's own :data:`~forgetting.worth.DEFAULT_DISCOUNT` is 0.99)."""

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


class DeprecationRule(enum.StrEnum):
    """What deprecates a memory: one of the governance chapter's policies (module docstring)."""

    WORTH = "worth"
    """``h+ + h- >= min_evidence`` and ``h+ / (h+ + h-) <= low_threshold`` (policy ``combined``)."""
    DISCOUNTED = "discounted"
    """The same on counters discounted by ``discount`` per outcome (policy ``discounted``)."""
    EFFECT = "effect"
    """The Agresti-Caffo ``effect_z`` upper bound of the effect on contrast tasks is < 0 (``effect``)."""
    SEQUENTIAL = "sequential"
    """The sequential test's e-value reaches ``1 / alpha`` (policy ``sequential``)."""


_RULE_SETTINGS: dict[DeprecationRule, tuple[str, ...]] = {
    DeprecationRule.WORTH: (),
    DeprecationRule.DISCOUNTED: ("discount",),
    DeprecationRule.EFFECT: ("effect_z",),
    DeprecationRule.SEQUENTIAL: ("alpha", "co_retrieval"),
}
"""The settings each rule reads besides the engine's and Memory Worth's."""
_RULE_DEFAULTS: dict[str, float | None] = {
    "discount": GOVERNED_DISCOUNT,
    "effect_z": DEFAULT_EFFECT_Z,
    "alpha": DEFAULT_ALPHA,
    "co_retrieval": None,
}


def _is_default(value: Any, default: float | None) -> bool:
    """``value`` is the default a caller who did not pass it would have (a rule's own settings
    aside, a value other than the default was passed on purpose)."""
    if default is None or value is None:
        return value is default
    try:
        return bool(value == default) and not isinstance(value, bool)
    except Exception:  # a comparison that fails is no default
        return False


def _co_retrieval_problem(co_retrieval: object) -> str | None:
    """Why ``co_retrieval`` is not a chance (``None``: a real number in ``[0, 1]``)."""
    return real_problem("co_retrieval", co_retrieval, 0.0, 1.0)


def _rule_problems(rule: Any, values: dict[str, Any]) -> tuple[list[str | None], DeprecationRule | None]:
    """The problems of ``rule`` and the rules' settings, and the rule if it is one.

    A setting of the chosen rule is checked; one of another rule must keep its default (it would
    do nothing); ``co_retrieval`` is required by ``SEQUENTIAL``.
    """
    chosen = None
    problems: list[str | None] = []
    names = ", ".join(repr(r.value) for r in DeprecationRule)
    if isinstance(rule, str) and rule in set(DeprecationRule):
        chosen = DeprecationRule(rule)
    else:
        problems.append(f"rule must be one of {names} (a DeprecationRule or its value), got {shown(rule)}")
    checks: dict[str, Callable[[object], str | None]] = {
        "discount": discount_problem,
        "effect_z": effect_z_problem,
        "alpha": alpha_problem,
        "co_retrieval": _co_retrieval_problem,
    }
    owners = {name: r for r, settings in _RULE_SETTINGS.items() for name in settings}
    for name, value in values.items():
        if chosen is not None and name not in _RULE_SETTINGS[chosen]:
            if not _is_default(value, _RULE_DEFAULTS[name]):
                problems.append(
                    f"{name} is a setting of rule {owners[name].value!r}, not of rule {chosen.value!r}: "
                    f"got {name}={shown(value)} (leave it out, or pass rule={owners[name].value!r})"
                )
        elif value is None and name == "co_retrieval":
            if chosen is DeprecationRule.SEQUENTIAL:
                problems.append(
                    "co_retrieval is required by rule 'sequential': the chance, a real number in [0, 1], "
                    "that a contrast task retrieves both candidates (else one of the two, each equally "
                    "likely); its test's level holds only if that is how the retrieval draws them"
                )
        else:
            problems.append(checks[name](value))
    return problems, chosen


class GovernedMemory:
    """A decay working set (evict once ``exp(-t / S) < eviction_threshold``) whose memories a
    :class:`DeprecationRule` deprecates on outcome evidence (module docstring).

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
    rule : DeprecationRule or its value, default ``DeprecationRule.WORTH``
        What deprecates a memory. Under ``EFFECT`` and ``SEQUENTIAL`` the Memory Worth settings
        above only set :meth:`worth_class`, which is reported, not acted on.
    discount : float, default 0.9
        ``gamma`` in (0, 1] of the ``DISCOUNTED`` rule's counters.
    effect_z : float, default 2.576
        ``z`` in [0, 10] of the ``EFFECT`` rule's interval (a two-sided 99 % interval per look).
    alpha : float, default 0.01
        Level in (0, 1) of the ``SEQUENTIAL`` rule's test, over a whole stream, per memory.
    co_retrieval : float, required by ``SEQUENTIAL``
        The chance in [0, 1] that a contrast task retrieves both of its two candidates (else one
        of them, each equally likely); the test bets on ``q = (1 + co_retrieval) / 2``.

    Every setting is keyword-only. The defaults are the governance chapter's published ones: the
    engine's ``theta`` and Memory Worth's taxonomy as its ``combined`` policy uses them,
    ``effect_z = 2.576`` and ``alpha = 0.01`` (each fixed before any run as its policy's
    default), and the chapter's ``discount = 0.9``; its world has ``co_retrieval = 0.5``. A
    setting of another rule than ``rule``, unless left at its default, would do nothing and is
    refused: ``ValueError``, naming every bad setting at once, its value and what is allowed.

    Notes
    -----
    Memory ids are any hashable value but a ``bool`` or a value not equal to itself (NaN);
    numpy scalars are stored as the Python values they equal. :meth:`to_dict` writes ``str`` and
    ``int`` ids exactly and refuses any other id with a ``ValueError`` naming it (JSON has no
    other key that reads back as the same value). Every call is checked completely first: a
    refused call (``ValueError`` naming the argument and the value, every problem at once)
    changes nothing.

    Invariants: a memory is in exactly one of :class:`MemoryStatus` once stored; a deprecated
    memory stays deprecated; decisions equal the chapter's policy of the rule on the same events.

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

    Under ``EFFECT`` a memory goes only when the tasks that got it back do worse than those that
    did not (a coin picked one of the two candidates, independently of the outcome):

    >>> memory = GovernedMemory(rule="effect")
    >>> memory.store("tool-x", turn=1)
    >>> memory.store("tool-y", turn=1)
    >>> for turn in range(2, 14):
    ...     used = memory.retrieve(["tool-x"] if turn % 2 else ["tool-y"], turn=turn)
    ...     gone = memory.outcome(used, success=not turn % 2, turn=turn, candidates=["tool-x", "tool-y"])
    >>> memory.deprecated(), memory.arms("tool-x")  # (n1, k1, n0, k0): 0 of 3 with it, 4 of 4 without
    ({'tool-x': 8}, (3, 0, 4, 4))
    >>> memory.held()
    ['tool-y']
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
        rule: DeprecationRule | str = DeprecationRule.WORTH,
        discount: float = GOVERNED_DISCOUNT,
        effect_z: float = DEFAULT_EFFECT_Z,
        alpha: float = DEFAULT_ALPHA,
        co_retrieval: float | None = None,
    ) -> None:
        rule_values = {
            "discount": discount,
            "effect_z": effect_z,
            "alpha": alpha,
            "co_retrieval": co_retrieval,
        }
        rule_problems, chosen = _rule_problems(rule, rule_values)
        raise_problems(
            [
                *decay_problems(eviction_threshold, baseline_stability),
                *taxonomy_problems(prior, min_evidence, high_threshold, low_threshold),
                *rule_problems,
            ]
        )
        assert chosen is not None  # no problem: a rule
        self._rule = chosen
        self._rule_settings = {name: float(cast(float, rule_values[name])) for name in _RULE_SETTINGS[chosen]}
        self._engine = EbbinghausEngine(
            eviction_threshold=float(eviction_threshold), baseline_stability=float(baseline_stability)
        )
        taxonomy = {
            "prior": float(prior),
            "min_evidence": float(min_evidence),
            "high_threshold": float(high_threshold),
            "low_threshold": float(low_threshold),
        }
        self._worth: MemoryWorth = (
            DiscountedMemoryWorth(discount=self._rule_settings["discount"], **taxonomy)
            if chosen is DeprecationRule.DISCOUNTED
            else MemoryWorth(**taxonomy)
        )
        self._ids: list[Hashable] = []  # every id ever stored, in order of first store
        self._index: dict[Hashable, int] = {}  # id -> its place in _ids (the engine files it as str)
        self._contents: list[str] = []
        self._deprecated: dict[Hashable, int] = {}  # id -> turn of deprecation, in that order
        self._arms: dict[Hashable, EffectArms] = {}  # EFFECT: id -> its contrast tasks' arms
        self._tests: dict[Hashable, HarmTest] = {}  # SEQUENTIAL: id -> its test

    # --- settings ---------------------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        """The keyword arguments this memory was made with: the numbers as floats, ``rule`` as its
        value, and only the rule's own settings (``GovernedMemory(**settings())`` is this memory
        before any call)."""
        worth = self._worth
        return {
            "eviction_threshold": self._engine.eviction_threshold,
            "baseline_stability": self._engine.baseline_stability,
            "prior": worth.prior,
            "min_evidence": worth.min_evidence,
            "high_threshold": worth.high_threshold,
            "low_threshold": worth.low_threshold,
            "rule": self._rule.value,
            **self._rule_settings,
        }

    @property
    def rule(self) -> DeprecationRule:
        """What deprecates a memory (:class:`DeprecationRule`)."""
        return self._rule

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

    def outcome(
        self,
        mem_ids: Sequence[Hashable],
        *,
        success: bool,
        turn: int,
        candidates: Sequence[Hashable] = (),
    ) -> list[Hashable]:
        """Record the outcome of a task that used ``mem_ids``; return the ids it deprecated.

        Each id's ``h+`` (``success``) or ``h-`` grows by 1 (under ``DISCOUNTED`` after every
        memory's counters are multiplied by ``discount``; an outcome of no ids changes no counter,
        as in the chapter). Then the rule deprecates, at ``turn``:

        * ``WORTH``, ``DISCOUNTED``: each id of ``mem_ids`` not yet deprecated whose class is now
          ``low-value`` (``h+ + h- >= min_evidence`` and ``h+ / (h+ + h-) <= low_threshold``).
        * ``EFFECT``, ``SEQUENTIAL``: each of ``candidates`` whose evidence of harm, with this task
          counted, crosses the rule's line (:func:`~forgetting.worth.harmful`,
          :meth:`~forgetting.worth.HarmTest.harmful`); ``mem_ids`` are not scored otherwise.

        ``candidates`` (default: none) makes this task a *contrast task*: the memories its
        retrieval chose ``mem_ids`` among by a draw independent of how the task would go (in the
        chapter, the two contradicting facts: both with ``co_retrieval``, else one at random). A
        task counts only when every candidate is held (the chapter's "both facts available"),
        in each candidate's *in* arm if it is in ``mem_ids``, else in its *out* arm, so an
        outcome with ``mem_ids`` empty is evidence too. ``EFFECT`` counts every contrast task,
        including one whose search found none of the candidates (in the chapter, crowded out by
        noise); ``SEQUENTIAL`` takes exactly two candidates and counts a task only when at
        least one of them was retrieved, since only then is each retrieved with chance ``q``.
        ``WORTH`` and ``DISCOUNTED`` ignore ``candidates``. A retrieval that follows the task
        (similarity, difficulty) is no such draw: its outcome is not a contrast task.

        ``mem_ids`` and ``candidates`` are each distinct ids of stored memories (``mem_ids``
        normally what :meth:`retrieve` returned), ``success`` a ``bool`` (``-1`` is truthy:
        numbers are refused). ``ValueError`` (nothing changed) otherwise.
        """
        problems, ids = self._ids_problems("mem_ids", mem_ids)
        candidate_problems, pair = self._ids_problems("candidates", candidates)
        if not candidate_problems and self._rule is DeprecationRule.SEQUENTIAL and len(pair) not in (0, 2):
            candidate_problems.append(
                f"candidates must be empty or two ids under rule 'sequential' (its chance q = (1 + "
                f"co_retrieval) / 2 is that of one of two), got {shown(pair)}"
            )
        raise_problems(
            [*problems, *candidate_problems, bool_problem("success", success), self._turn_problem(turn)]
        )
        turn, success = int(turn), bool(success)
        self._advance(turn)
        self._engine.recall(_CLOCK_KEY, turn)
        deprecated = []
        contrasted = self._rule in (DeprecationRule.EFFECT, DeprecationRule.SEQUENTIAL)
        if contrasted and pair and all(self._is_held(m) for m in pair):  # a contrast task
            deprecated = self._contrast(set(ids), pair, success)
        if ids:
            worth = self._worth
            worth.update(ids, success)
            if self._rule in (DeprecationRule.WORTH, DeprecationRule.DISCOUNTED):
                deprecated = [m for m in ids if m not in self._deprecated and worth.classify(m) == LOW_VALUE]
        for mem_id in deprecated:
            self._deprecated[mem_id] = turn
        return deprecated

    def _contrast(self, used: set[Hashable], pair: list[Hashable], success: bool) -> list[Hashable]:
        """Count a contrast task for each candidate (all held); those whose evidence crossed."""
        crossed = []
        if self._rule is DeprecationRule.EFFECT:
            effect_z = self._rule_settings["effect_z"]
            for mem_id in pair:
                arms = self._arms.setdefault(mem_id, EffectArms())
                arms.add(mem_id in used, success)
                if arms.upper_bound_below_zero(effect_z):  # effect_z checked once, in __init__
                    crossed.append(mem_id)
        elif used.intersection(pair):  # SEQUENTIAL: a task of the known chance q
            for mem_id in pair:
                test = self._tests.get(mem_id)
                if test is None:
                    test = self._tests[mem_id] = self._new_test()
                test.add(mem_id in used, success)
                if test.harmful():
                    crossed.append(mem_id)
        return crossed

    def _new_test(self, arms: EffectArms | None = None, products: list[float] | None = None) -> HarmTest:
        settings = self._rule_settings
        if arms is None or products is None:
            return HarmTest(settings["co_retrieval"], settings["alpha"])
        return HarmTest(settings["co_retrieval"], settings["alpha"], arms, products)

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

    def arms(self, mem_id: Hashable) -> tuple[int, int, int, int]:
        """``(n1, k1, n0, k0)`` of a stored memory's contrast tasks: ``n1`` that retrieved it
        (``k1`` succeeded), ``n0`` that did not (``k0``); zeros before any, and under ``WORTH``
        and ``DISCOUNTED``, which count none. The ``EFFECT`` estimate is ``k1/n1 - k0/n0``."""
        mem_id = self._known(mem_id)
        found = self._tests[mem_id].arms if mem_id in self._tests else self._arms.get(mem_id)
        return (0, 0, 0, 0) if found is None else (found.n1, found.k1, found.n0, found.k0)

    def harm_evidence(self, mem_id: Hashable) -> float:
        """The ``SEQUENTIAL`` test's e-value of a stored memory, the mean over the bets of
        ``prod(1 - lam * W)`` (1.0 before its first contrast task); it deprecates at ``1 / alpha``.
        ``ValueError`` under another rule."""
        if self._rule is not DeprecationRule.SEQUENTIAL:
            raise ValueError(
                f"harm_evidence is the 'sequential' rule's; this memory's rule is {self._rule.value!r}"
            )
        mem_id = self._known(mem_id)
        return self._tests[mem_id].evidence if mem_id in self._tests else 1.0

    def retention(self, mem_id: Hashable, turn: int) -> float:
        """Retention ``exp(-(turn - last touch) / S)`` of a memory in the engine (held, or deprecated
        and not yet evicted) at ``turn`` (no earlier than its last touch); ``ValueError`` otherwise."""
        key = self._key(self._known(mem_id))
        if not self._engine.is_present(key):
            raise ValueError(f"mem_id {shown(mem_id)} was evicted: it has no retention")
        return self._engine.retention(key, turn)

    # --- JSON -------------------------------------------------------------------------------
    def _stored_counters(self, mem_id: Hashable) -> tuple[float, float]:
        """``(h+, h-)`` as the estimator stores them: divided by :meth:`_worth_scale`."""
        worth = self._worth
        if isinstance(worth, DiscountedMemoryWorth):  # stored scaled, as its own to_dict writes them
            return worth._scaled_successes[mem_id], worth._scaled_failures[mem_id]
        return worth.counters(mem_id)

    def _worth_scale(self) -> float:
        worth = self._worth
        return worth._scale if isinstance(worth, DiscountedMemoryWorth) else 1.0

    def to_dict(self) -> dict[str, Any]:
        """The whole state as JSON-safe data (``json.dumps`` needs nothing else).

        ``{"format", "version", "settings" (:meth:`settings`), "turn", "memories": [[id,
        content], ...] (order of first store), "working_set": [[index, created turn, last touch,
        touches], ...] (the engine's items, in registration order), "worth": [[index, h+, h-],
        ...] (order of first outcome; the counters divided by "worth_scale", which is 1.0 but
        under ``DISCOUNTED``), "worth_scale", "outcomes": n, "evidence": [[index, n1, k1, n0, k0],
        ...] (``EFFECT``; ``SEQUENTIAL`` appends the list of the test's running products; order
        of first contrast task; empty under the other rules), "deprecated": [[index, turn],
        ...]}``; an ``index`` is a place in ``memories``. Floats are written as Python floats
        (JSON keeps them exactly). ``ValueError`` naming the first id that is neither a ``str``
        nor an ``int``.
        """
        for mem_id in self._ids:
            json_id(mem_id)
        engine, worth, index = self._engine, self._worth, self._index
        items = (engine.item(key) for key in engine.present_ids())
        evidence: list[list[Any]] = [[index[m], a.n1, a.k1, a.n0, a.k0] for m, a in self._arms.items()]
        for m, test in self._tests.items():
            a = test.arms
            evidence.append([index[m], a.n1, a.k1, a.n0, a.k0, list(test.products)])
        return {
            **json_header(FORMAT, FORMAT_VERSION),
            "settings": self.settings(),
            "turn": engine.last_turn,
            "memories": [[m, c] for m, c in zip(self._ids, self._contents)],
            "working_set": [[int(i.mem_id), i.created_turn, i.last_touched, i.touch_count] for i in items],
            "worth": [[index[m], *self._stored_counters(m)] for m in worth.memory_ids()],
            "worth_scale": self._worth_scale(),
            "outcomes": worth.n_episodes_,
            "evidence": evidence,
            "deprecated": [[index[m], t] for m, t in self._deprecated.items()],
        }

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """The memory :meth:`to_dict` wrote (after ``json.loads`` too): same state, same future.

        Reads version 2 and version 1 (written before the rules: its settings have no ``rule``,
        so it is a ``WORTH`` memory, and it has no ``worth_scale`` or ``evidence``). The engine
        is rebuilt by replaying each held item's store and recalls (its stability is a function
        of its touches), the counters by adding each memory's ``h+`` and ``h-`` at once (``0.0 +
        h`` is ``h`` exactly; discounted ones are set as stored, with their scale), the evidence
        as written (a test's products are checked against its counts). ``ValueError`` for another
        format or version, or data that is not what :meth:`to_dict` writes.
        """
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"data must be a dict with format {FORMAT!r}, got {shown(data)}")
        version = data.get("version")
        if type(version) is not int or version not in (1, FORMAT_VERSION):
            raise ValueError(f"data has version {shown(version)}; this library reads versions 1 and 2")
        if version == 1:
            if isinstance(data.get("settings"), dict) and "rule" in data["settings"]:
                raise ValueError("data has version 1 but settings with a rule (version 2 has rules)")
            data = {**data, "worth_scale": 1.0, "evidence": []}
        try:
            memory = cls(**data["settings"])
            memory._restore(data)
        except (KeyError, TypeError, IndexError) as error:
            raise ValueError(
                f"data is not a GovernedMemory's to_dict ({type(error).__name__}: {error})"
            ) from None
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
        self._restore_worth(data["worth"], data["worth_scale"])
        outcomes = data["outcomes"]
        raise_problems([int_problem("outcomes", outcomes, minimum=0)])
        self._worth.n_episodes_ = outcomes
        self._restore_evidence(data["evidence"])
        for i, deprecated_turn in data["deprecated"]:
            raise_problems([int_problem("deprecated turn", deprecated_turn, minimum=0, maximum=turn)])
            self._deprecated[self._ids[self._place(i)]] = deprecated_turn

    def _restore_worth(self, entries: list[Any], scale: Any) -> None:
        """The counters of ``to_dict``'s ``"worth"`` and ``"worth_scale"``."""
        worth = self._worth
        seen: set[int] = set()
        counters: list[tuple[Hashable, float, float]] = []
        for i, positive, negative in entries:
            place = self._place(i)
            raise_problems(
                [
                    f"worth must list each memory once, got index {place} twice" if place in seen else None,
                    real_problem("worth counter", positive, 0.0),
                    real_problem("worth counter", negative, 0.0),
                ]
            )
            seen.add(place)
            counters.append((self._ids[place], float(positive), float(negative)))
        if isinstance(worth, DiscountedMemoryWorth):
            raise_problems([real_problem("worth_scale", scale, 0.0, 1.0, low_open=True)])
            for mem_id, positive, negative in counters:  # as stored: the same future, exactly
                worth._scaled_successes[mem_id] = positive
                worth._scaled_failures[mem_id] = negative
            worth._scale = float(scale)
            return
        if type(scale) is not float or scale != 1.0:
            raise ValueError(f"worth_scale must be 1.0 under rule {self._rule.value!r}, got {shown(scale)}")
        for mem_id, positive, negative in counters:
            worth.update([mem_id], True, weights=[positive]).update([mem_id], False, weights=[negative])

    def _restore_evidence(self, entries: list[Any]) -> None:
        """The arms and tests of ``to_dict``'s ``"evidence"``."""
        width = {DeprecationRule.EFFECT: 5, DeprecationRule.SEQUENTIAL: 6}.get(self._rule)
        if width is None and entries:
            raise ValueError(f"evidence must be empty under rule {self._rule.value!r}, got {shown(entries)}")
        for entry in entries:
            if not isinstance(entry, list) or len(entry) != width:
                raise ValueError(f"evidence entry {shown(entry)} is not a {width}-item list")
            place = self._place(entry[0])
            mem_id = self._ids[place]
            n1, k1, n0, k0 = entry[1:5]
            counts_ok = all(type(v) is int for v in (n1, k1, n0, k0)) and 0 <= k1 <= n1 and 0 <= k0 <= n0
            if not counts_ok or mem_id in self._arms or mem_id in self._tests:
                raise ValueError(f"evidence entry {shown(entry)} is not the arms of a memory listed once")
            arms = EffectArms(n1, k1, n0, k0)
            if self._rule is DeprecationRule.EFFECT:
                self._arms[mem_id] = arms
                continue
            products = entry[5]
            if not self._products_match(arms, products):
                raise ValueError(
                    f"evidence entry {shown(entry)} has products that are not its counts' "
                    f"({len(SEQUENTIAL_SHARES)} floats >= 0)"
                )
            self._tests[mem_id] = self._new_test(arms, [float(p) for p in products])

    def _products_match(self, arms: EffectArms, products: Any) -> bool:
        """``products`` are the test's running products for ``arms``: one float per share, each
        the product of its factors to within rounding (relative 1e-6, compared as logarithms, as
        a factor's power alone may overflow; both below 1e-290 when the product underflowed)."""
        if not isinstance(products, list) or len(products) != len(SEQUENTIAL_SHARES):
            return False
        if not all(type(p) is float and math.isfinite(p) and p >= 0 for p in products):
            return False
        factors = _float_factors(retrieval_chance(self._rule_settings["co_retrieval"]))
        counts = {
            (True, True): arms.k1,
            (True, False): arms.n1 - arms.k1,
            (False, True): arms.k0,
            (False, False): arms.n0 - arms.k0,
        }
        tiny = math.log(1e-290)
        for product, shares in zip(products, factors):
            expected = math.fsum(count * math.log(shares[key]) for key, count in counts.items() if count)
            if expected < tiny or product < 1e-290:  # underflowed: no relative precision is left
                if not (expected < tiny and product < 1e-290):
                    return False
            elif abs(math.log(product) - expected) > 1e-6:
                return False
        return True
