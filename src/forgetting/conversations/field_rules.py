"""The forgetting rules of two systems of the field, read from their code, as :mod:`.policies`.

* :class:`MemoryBank` -- MemoryBank (Zhong et al., AAAI 2024), repository
  ``zhongwanjun/MemoryBank-SiliconFriend``, file ``memory_bank/memory_retrieval/forget_memory.py``
  (read at commit ``0cc7111a267464964a008255d509c96ffdb636e4``, "upload code v0", and at
  ``3869efcc2c5847e78353b4c53056903f5d1730a6``, "update memory forgetting mechanism", the
  repository's last change to the file: :class:`MemoryBankCode`);
* :class:`YourMemory` -- repository ``sachitrafa/YourMemory``: ``src/services/decay.py`` at
  commit ``3b2ed915f9d830035598e82fe86c2cef7fa9d1ad`` (``DECAY_RATES``, lines 15-21;
  ``compute_strength``, lines 24-58, the formula lines 54-58, with the ``min(1.0, ...)`` that
  the earlier version at ``40685adea9d705a26385254f2c7b6d8041a852f8`` lacks);
  ``src/jobs/decay_job.py`` at ``0d7f8e955075134bb134d0606687d855b96b61cb`` (``PRUNE_THRESHOLD =
  0.05``, line 18; ``if strength < PRUNE_THRESHOLD`` deletes, line 63; run every 24 hours, its
  docstring); ``src/services/retrieve.py`` at ``40685ade...`` (a retrieved memory with similarity
  ``>= REINFORCE_THRESHOLD = 0.75`` gets ``recall_count + 1`` and ``last_accessed_at = NOW()``:
  here the retriever's recalls, given as data, stand in for that choice).

Line numbers count from 1 in the stored copies read for this module.

Neither says when, on a conversation, its forgetting pass runs: that is ``forget_at``
(:class:`PassTime`), a setting of each policy. Both save their parameters and their running
state, generator included (``to_dict``, ``from_dict``, ``resume``: :mod:`.policies`, "Saving").
"""

from __future__ import annotations

import bisect
import enum
import functools
import heapq
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, ClassVar, cast

import numpy as np

from .._validate import int_problem, raise_problems, real_problem, seed_problem, shown
from ..decay.curves import retention
from .policies import (
    CheckedEvents,
    Event,
    Replay,
    SavingPolicy,
    check_events,
    choice_problem,
    day_number,
    read_event,
    read_id,
    read_int,
    read_row,
    read_time,
    replay_state,
    saved,
    saved_event,
    saved_id,
    saved_time,
)

__all__ = [
    "MEMORYBANK_CODES",
    "MEMORYBANK_DAYS",
    "MAX_SECONDS",
    "MEMORYBANK_LEVELS",
    "PASS_TIMES",
    "YOURMEMORY_FACT_RATE",
    "YOURMEMORY_CLOCKS",
    "YOURMEMORY_PRUNE",
    "YOURMEMORY_REINFORCE",
    "MemoryBank",
    "MemoryBankCode",
    "PassTime",
    "YourMemory",
    "YourMemoryClock",
    "is_pass",
    "memorybank_replays",
    "memorybank_retention",
    "memorybank_head_retention",
    "yourmemory_active_days",
    "yourmemory_prune_second",
    "yourmemory_reinforced",
    "yourmemory_strength",
]


class PassTime(enum.StrEnum):
    """When a forgetting pass runs: always at the first event, then as the member says."""

    TURN = "turn"
    """Before every turn."""
    SESSION = "session"
    """Before the first turn of each new session (a session number other than the previous event's)."""
    DAY = "day"
    """Before the first turn of each new calendar date."""


class MemoryBankCode(enum.StrEnum):
    """Which of MemoryBank's ``forget_memory.py`` a :class:`MemoryBank` runs (one rule each).

    ``V0`` keeps ``R = exp(-t / S)``; ``HEAD`` keeps ``R = exp(-t * S / 5)``, so a recall makes a
    memory fade *faster*; ``INTENT`` keeps ``R = exp(-t / (5 * S))``, the slower fading that the
    HEAD docstring states ("The higher the memory strength, the slower the rate of forgetting").
    """

    V0 = "v0"
    """Commit ``0cc7111`` ("upload code v0"): ``forgetting_curve`` returns ``math.exp(-t / S)``
    (line 36), levels ``S = 1, 2, 3`` (lines 49, 52-55), a memory ``t >= 30`` days old is dropped
    (lines 50, 83), kept with ``random.random() < R`` (line 87)."""
    HEAD = "head"
    """Commit ``3869efc`` as written: ``forgetting_curve`` returns ``math.exp(-t / 5*S)`` (line
    36), which Python reads as ``exp((-t / 5) * S)``; ``S`` starts at 1 (``dialog.get(
    'memory_strength', 1)``, line 106) and a recall adds 1 with no cap and sets
    ``last_recall_date`` (lines 63-71, by ``memory_id``); no age drop; a memory is forgotten when
    ``random.random() > R`` (line 119), so kept with ``u <= R``; each pass writes the bank back to
    the file it read (``self.write_memories(self.filepath)``, line 147; after a search,
    ``save_updated_memory``, lines 353-354, 359-360), so strengths and drops persist."""
    INTENT = "intent"
    """Commit ``3869efc`` with ``math.exp(-t / (5 * S))``, the docstring's evident intent (lines
    21-35): everything else as :attr:`HEAD`. Not code anyone ran: a labelled reading."""


#: The values of :class:`MemoryBankCode`.
MEMORYBANK_CODES = tuple(code.value for code in MemoryBankCode)


#: When a forgetting pass runs, as strings: the values of :class:`PassTime`.
PASS_TIMES = tuple(when.value for when in PassTime)
#: MemoryBank's ``self.memory_level = 3`` (forget_memory.py line 49): strengths ``S = 1, 2, 3``.
MEMORYBANK_LEVELS = 3
#: MemoryBank's ``self.total_date = 30`` (line 50): a memory ``t >= 30`` days old is dropped.
MEMORYBANK_DAYS = 30
#: YourMemory's ``DEFAULT_DECAY_RATE`` (decay.py line 21), the base rate of the category ``"fact"``.
YOURMEMORY_FACT_RATE = 0.16
#: YourMemory's ``PRUNE_THRESHOLD = 0.05`` (decay_job.py line 18): weaker memories are deleted.
YOURMEMORY_PRUNE = 0.05
#: YourMemory's ``REINFORCE_THRESHOLD = 0.75`` (retrieve.py line 14): a retrieved memory counts
#: as recalled only at cosine similarity ``>= 0.75`` (lines 177-178, 282).
YOURMEMORY_REINFORCE = 0.75


class YourMemoryClock(enum.StrEnum):
    """What YourMemory's ``days`` counts (:class:`YourMemory`'s ``clock``)."""

    CALENDAR = "calendar"
    """Real time: whole seconds since the store or last recall, over 86400 (``compute_strength``
    without ``active_days``, decay.py lines 49-52 at ``3b2ed91``)."""
    ACTIVE = "active"
    """What the decay job passes (decay_job.py lines 76-84 at ``3b2ed91``, unchanged at
    ``5a08d41``): ``get_active_days_since`` (decay.py lines 94-144), the number of dates with user
    activity from the date of the store or last recall to the day of the pass, both included
    (``active_on >= since_date AND active_on <= today``, lines 101-102, 111): here the distinct
    calendar dates of events (:func:`yourmemory_active_days`)."""


#: The values of :class:`YourMemoryClock`.
YOURMEMORY_CLOCKS = tuple(clock.value for clock in YourMemoryClock)
#: Whole seconds between ``datetime.min`` and ``datetime.max``: no two events are further apart.
MAX_SECONDS = int((datetime.max - datetime.min).total_seconds())


def is_pass(forget_at: str, event: Event, previous: Event | None) -> bool:
    """Whether a pass runs at ``event`` (:class:`PassTime`, or its value; always at the first event)."""
    if previous is None or forget_at == "turn":
        return True
    if forget_at == "session":
        return event.session != previous.session
    return day_number(event.time) != day_number(previous.time)


def memorybank_retention(days: int, strength: int) -> float:
    """MemoryBank's ``forgetting_curve``: ``R = exp(-t / S)``, ``t`` in whole days, ``S`` the level + 1.

    >>> memorybank_retention(0, 1), round(memorybank_retention(2, 2), 4)
    (1.0, 0.3679)
    """
    return retention(days, float(strength))


def yourmemory_strength(seconds: int, recalls: int, importance: float, base_rate: float) -> float:
    """YourMemory's ``compute_strength``, ``days = seconds / 86400``:

    ``round(min(1, imp * exp(-lambda_eff * days) * (1 + 0.2 * recalls)), 6)`` with
    ``lambda_eff = base_rate * (1 - 0.8 * imp)``.

    >>> yourmemory_strength(0, 0, 0.5, 0.16), yourmemory_strength(86400, 5, 1.0, 0.16)
    (0.5, 1.0)
    """
    effective_rate = base_rate * (1 - importance * 0.8)
    strength = importance * math.exp(-effective_rate * (seconds / 86400)) * (1 + recalls * 0.2)
    return round(min(1.0, strength), 6)


def memorybank_head_retention(days: int, strength: int, code: MemoryBankCode | str) -> float:
    """MemoryBank's ``forgetting_curve`` at ``3869efc``: ``R = exp(-t / 5*S)`` (``HEAD``, Python's
    reading ``exp((-t / 5) * S)``) or ``R = exp(-t / (5*S))`` (``INTENT``); ``S = 1 + recalls``.

    >>> memorybank_head_retention(5, 2, "head") < memorybank_head_retention(5, 1, "head")
    True
    >>> round(memorybank_head_retention(5, 2, "intent"), 4)
    0.6065
    """
    if code == MemoryBankCode.HEAD:
        return math.exp(-days / 5 * strength)
    if code == MemoryBankCode.INTENT:
        return math.exp(-days / (5 * strength))
    raise ValueError(f"code must be one of 'head', 'intent', got {shown(code)}")


@functools.lru_cache(maxsize=64)
def _bank_retentions(max_days: int, max_strength: int) -> tuple[tuple[float, ...], ...]:
    """``R[t][S - 1] = memorybank_retention(t, S)`` for ``t < max_days`` and ``S <= max_strength``:
    every value a pass compares (an older memory is dropped without its coin), each computed by
    the scalar formula, so a lookup is the same float."""
    return tuple(
        tuple(memorybank_retention(days, strength) for strength in range(1, max_strength + 1))
        for days in range(max_days)
    )


@dataclass
class _Bank:
    """Held memories as ``id -> store index``; ``level`` and ``since`` (the day number of the
    store or last recall) are lists by store index, so a pass reads lists, not dicts."""

    policy: MemoryBank
    rng: np.random.Generator
    held: dict[Hashable, int] = field(default_factory=dict)  # in store order
    level: list[int] = field(default_factory=list)
    since: list[int] = field(default_factory=list)
    previous: Event | None = None
    day: tuple[Event | None, int] = (None, 0)  # the last event seen and its day number

    SAVED = ("generator", "held", "levels", "since", "previous")

    def _today(self, event: Event) -> int:
        if self.day[0] is not event:
            self.day = (event, day_number(event.time))
        return self.day[1]

    def forget(self, event: Event) -> list[Hashable]:
        previous, self.previous = self.previous, event
        if not is_pass(self.policy.forget_at, event, previous):
            return []
        # one coin per memory stored so far, held or not; a held one reads its own (a Python float)
        coins = self.rng.random(len(self.level)).data
        today, max_days, since, level = self._today(event), self.policy.max_days, self.since, self.level
        code = self.policy.code
        if code != MemoryBankCode.V0:  # 3869efc: no age drop, no cap, forgotten when u > R
            dropped = [
                mem_id
                for mem_id, i in self.held.items()
                if (days := today - since[i])
                and coins[i] > memorybank_head_retention(days, level[i] + 1, code)
            ]
            for mem_id in dropped:
                del self.held[mem_id]
            return dropped
        table = _bank_retentions(max_days, self.policy.max_strength)
        dropped = [  # t = 0: R = 1 > u, kept without reading the coin
            mem_id
            for mem_id, i in self.held.items()
            if (days := today - since[i]) >= max_days or (days and not coins[i] < table[days][level[i]])
        ]
        for mem_id in dropped:
            del self.held[mem_id]
        return dropped

    @property
    def highest_level(self) -> int:
        """The highest level any memory has reached (``-1`` before the first store)."""
        return max(self.level, default=-1)

    def recall(self, mem_id: Hashable, event: Event) -> None:
        i = self.held[mem_id]
        capped = self.policy.code == MemoryBankCode.V0
        self.level[i] = min(self.level[i] + 1, self.policy.max_strength - 1) if capped else self.level[i] + 1
        self.since[i] = self._today(event)

    def store(self, event: Event) -> list[Hashable]:
        self.held[event.stored] = len(self.level)
        self.level.append(0)
        self.since.append(self._today(event))
        return []

    def to_dict(self) -> dict[str, Any]:
        """``{..., "policy", "generator": the numpy generator's ``bit_generator.state``, "held":
        [[id, store index], ...] (store order), "levels" and "since": by store index (every memory
        stored, held or not), "previous": the last event (turn, time, session, stored) or None}``."""
        return saved(
            f"{type(self.policy).__name__}.state",
            policy=self.policy.to_dict(),
            generator=self.rng.bit_generator.state,
            held=[[saved_id(mem_id), i] for mem_id, i in self.held.items()],
            levels=list(self.level),
            since=list(self.since),
            previous=None if self.previous is None else saved_event(self.previous),
        )

    def restore(self, entries: Mapping[str, Any]) -> None:
        """Fill a fresh bank from ``entries``: the generator's state, the held ids, the levels and days."""
        try:
            self.rng.bit_generator.state = entries["generator"]
        except (ValueError, TypeError, KeyError) as error:
            raise ValueError(f"generator is not a numpy generator's state ({error})") from None
        top = self.policy.max_strength - 1 if self.policy.code == MemoryBankCode.V0 else None
        self.level = [read_int(level, "level", minimum=0, maximum=top) for level in entries["levels"]]
        self.since = [read_int(day, "since", minimum=1) for day in entries["since"]]
        stored = len(self.level)
        if len(self.since) != stored:
            raise ValueError(f"levels and since must be as long, got {stored} and {len(self.since)}")
        before = -1
        for item in entries["held"]:
            mem_id, i = read_row(item, 2, "held entry")
            read_id(mem_id)
            if mem_id in self.held or not (type(i) is int and before < i < stored):
                raise ValueError(f"held entry {shown(item)} is not a held memory")
            before = self.held[mem_id] = i
        previous = entries["previous"]
        self.previous = None if previous is None else read_event(previous, "previous")
        if (self.previous is None) != (stored == 0):
            raise ValueError(f"previous must be the last event if one was stored, got {shown(previous)}")


@dataclass(frozen=True, kw_only=True)
class MemoryBank(SavingPolicy):
    """MemoryBank's forgetting: at each pass, keep a memory with probability ``R = exp(-t / S)``
    (``code`` "v0", the default; "head" and "intent": :class:`MemoryBankCode`, below).

    ``t`` is whole calendar days since the memory was stored or last recalled (the source's
    ``(d2 - d1).days`` of two ``"%Y-%m-%d"`` dates, lines 65-69, of ``cur_level_date``, line 80);
    ``S`` is its level + 1, level 0 when stored and +1 per recall up to ``max_strength - 1``
    (``forget_rate`` with ``S = 1, 2, 3``, lines 52-55; a recall moves the memory up a level,
    capped, and sets ``cur_level_date``, lines 119-123). A pass (``forget_memory``, lines
    71-94) drops a memory with ``t >= max_days`` (line 83) and keeps any other with the coin
    ``u < R`` (lines 85-88; ``R = 1`` at ``t = 0``, so it is kept). The source runs a pass when
    it loads the memory for a chat (``load_update_and_split``, line 157): ``forget_at`` says
    when it runs here.

    The coins: at each pass, ``u = rng.random(n)`` from ``numpy.random.default_rng(seed)``, ``n``
    the memories stored so far (held or not), the ``k``-th stored memory reading ``u[k]``; so
    the draws depend only on the events, not on what was dropped. (The source draws Python's
    ``random.random()`` memory by memory, level by level: the same coin, another generator.)

    **What a reload does at v0, and why it is not modelled.** At ``0cc7111`` every load
    (``load_memory_file``, lines 224-238) calls ``initial_load_and_save`` (line 232), which
    rebuilds the bank from the raw memory file with every memory at ``level_0`` and
    ``cur_level_date`` its own date (lines 172, 180-189), then runs the pass (line 236, then
    line 157). The state a search writes (``save_updated_memory``, lines 397-399, 412-413) goes
    to ``*_forget_format.json``, which nothing reads: the lines that would (155-156, 233-234)
    are commented out. So across loads neither a drop nor a level survives, and within one
    load a recall moves the *first* memory of the recalled date at its level (``source`` is the
    date, lines 63, 97-108) up, not the memory retrieved. Which pass a later chat sees also
    depends on the vector index: an index already at ``vs_path`` is loaded and the surviving
    memories are *added* to it (lines 359-362), so a memory dropped at a load stays retrievable
    from the older index. Modelled literally, a reload before each pass would bring every memory
    stored so far back at level 0 (recalls would then change nothing: levels and dates are
    reset before the only pass that reads them), and a memory dropped at one pass could be held
    at the next; a :class:`~.policies.Replay` records a drop once, for good
    (:func:`~.policies.record_drops`), and which older index a chat searches is a deployment
    choice (``vs_path``), not in the file. So v0 here is the rule its functions state
    (``forget_memory`` and ``update_memory_when_searched`` on one bank that persists), with
    recalls by id.

    **3869efc** (``code`` "head"; :attr:`MemoryBankCode.HEAD`): a pass
    (``initial_load_forget_and_save``, lines 83-148) keeps each memory unless ``u > R`` with
    ``R = exp(-t / 5*S)`` as Python evaluates it, ``exp(-t * S / 5)`` (line 36); ``S`` is 1 at
    the store, ``+1`` per recall with no cap (lines 63-71, 106); no age drop; the bank is written
    back (line 147), so drops and strengths persist: the replay's one persisting bank is the
    source's. A recalled memory fades *faster* (``S = 2``: ``R = exp(-2t/5)``). ``code``
    "intent" replaces the formula by ``exp(-t / (5 * S))``. The same coins (``u[k]`` for the
    ``k``-th stored memory); ``max_strength`` and ``max_days`` do not apply and must stay at
    their defaults. The source never forgets a day's summary (lines 132-146); a replay has none.

    Attributes
    ----------
    seed : int
        An int ``>= 0``.
    max_strength : int, default 3
        The level cap: ``S`` in ``1 .. max_strength`` (the source's ``memory_level``), ``>= 1``.
    max_days : int, default 30
        ``total_date``: a memory ``t >= max_days`` days old is dropped at a pass; ``>= 1``.
    forget_at : PassTime or its value, default "session"
        When a pass runs (:func:`is_pass`); "session" is the source's once per chat. Read as
        the member.
    code : MemoryBankCode or its value, default "v0"
        Which commit's rule (:class:`MemoryBankCode`): "v0" (``0cc7111``), "head"
        (``3869efc`` as written), "intent" (``3869efc`` with ``exp(-t / (5 * S))``). Read as the
        member.
    """

    seed: int
    max_strength: int = MEMORYBANK_LEVELS
    max_days: int = MEMORYBANK_DAYS
    forget_at: PassTime | str = PassTime.SESSION
    code: MemoryBankCode | str = MemoryBankCode.V0
    #: Added after format 1 was first written: saved only when not v0, absent reads as v0.
    LATER_FIELDS: ClassVar[tuple[str, ...]] = ("code",)

    def __post_init__(self) -> None:
        raise_problems(
            [
                seed_problem("seed", self.seed),
                int_problem("max_strength", self.max_strength, minimum=1),
                int_problem("max_days", self.max_days, minimum=1),
                choice_problem("forget_at", self.forget_at, PASS_TIMES),
                choice_problem("code", self.code, MEMORYBANK_CODES),
                *self._head_problems(),
            ]
        )
        object.__setattr__(self, "forget_at", PassTime(self.forget_at))
        object.__setattr__(self, "code", MemoryBankCode(self.code))

    def _head_problems(self) -> list[str | None]:
        if self.code not in MEMORYBANK_CODES[1:]:
            return []
        return [
            None
            if value == default
            else f"{name} applies only to code 'v0' (3869efc has {what}): leave it at {default}, "
            f"got {shown(value)}"
            for name, value, default, what in (
                ("max_strength", self.max_strength, MEMORYBANK_LEVELS, "no cap"),
                ("max_days", self.max_days, MEMORYBANK_DAYS, "no age drop"),
            )
        ]

    @property
    def label(self) -> str:
        """E.g. ``MemoryBank (S ≤ 3, 30 days, pass per session, seed 0)`` (v0, as published);
        ``MemoryBank 3869efc as written (exp(-t·S/5), S = 1 + recalls, pass per session, seed 0)``;
        ``MemoryBank 3869efc, intent (exp(-t/(5S)), S = 1 + recalls, pass per session, seed 0)``."""
        if self.code == MemoryBankCode.HEAD:
            rule = "3869efc as written (exp(-t·S/5)"
        elif self.code == MemoryBankCode.INTENT:
            rule = "3869efc, intent (exp(-t/(5S))"
        else:
            days = f"{self.max_days} days, pass per {self.forget_at}"
            return f"MemoryBank (S ≤ {self.max_strength}, {days}, seed {self.seed})"
        return f"MemoryBank {rule}, S = 1 + recalls, pass per {self.forget_at}, seed {self.seed})"

    def start(self) -> _Bank:
        """An empty bank and a fresh generator."""
        return _Bank(self, np.random.default_rng(int(self.seed)))


def memorybank_replays(
    banks: Sequence[MemoryBank], events: Iterable[Event], k: int | None = None
) -> list[Replay]:
    """``[replay(bank, events, k) for bank in banks]`` for MemoryBanks that differ only in
    ``max_strength``, from fewer runs (the largest cap first).

    A cap binds only at a recall of a memory at level ``max_strength - 1``, and the coins do not
    depend on levels: a run in which no memory rose above level ``c - 1`` decides as a run of cap
    ``c`` does, so it serves every cap ``c`` with ``c - 1`` at least the highest level it reached
    (each with its own label). ``ValueError`` if the banks differ in anything but ``max_strength``.
    """
    if any(bank.code != MemoryBankCode.V0 for bank in banks):  # no cap: nothing to share
        if len(set(banks)) > 1:
            raise ValueError(f"banks must differ only in max_strength, got {[bank.label for bank in banks]}")
        return [replay_state(banks[0], events, k)[0]] * len(banks)
    if len({replace(bank, max_strength=1) for bank in banks}) > 1:
        raise ValueError(f"banks must differ only in max_strength, got {[bank.label for bank in banks]}")
    stream = events if isinstance(events, CheckedEvents) else check_events(events)
    runs: dict[MemoryBank, Replay] = {}
    reached, shared = 0, None
    for bank in sorted(set(banks), key=lambda bank: -bank.max_strength):
        if shared is not None and reached <= bank.max_strength - 1:
            runs[bank] = replace(shared, policy=bank.label)
        else:
            shared, state = replay_state(bank, stream, k)
            reached = cast(_Bank, state).highest_level
            runs[bank] = shared
    return [runs[bank] for bank in banks]


def yourmemory_prune_second(recalls: int, policy: YourMemory) -> int | None:
    """The first whole second ``s >= 0`` with ``yourmemory_strength(s, recalls, ...) <
    prune_threshold``: a memory of ``recalls`` recalls is pruned at the first pass ``s`` or more
    seconds after its store or last recall. ``None`` if ``s`` would exceed :data:`MAX_SECONDS`
    (no two events are that far apart: a memory of so slow a decay is never pruned).

    The formula falls with ``s`` (``exp`` of a falling argument, times a positive number, then
    ``min`` and ``round``, which keep order), so a doubling search brackets the second and a
    bisection finds it, evaluating the formula itself. That needs the test ``strength <
    prune_threshold`` to switch once as ``s`` grows, which holds wherever one second changes the
    exact strength by more than ``math.exp``'s error (a few ulp): one second changes it by
    ``lambda_eff / 86400`` of itself, at least ``3.7e-7`` at the source's base rate 0.16.
    Cached per argument values.

    >>> yourmemory_prune_second(0, YourMemory()), yourmemory_prune_second(0, YourMemory(importance=0.01))
    (8088505, 0)
    """
    return _prune_second(recalls, policy.importance, policy.base_rate, policy.prune_threshold)


@functools.lru_cache(maxsize=4096)
def _prune_second(recalls: int, importance: float, base_rate: float, prune_threshold: float) -> int | None:
    def pruned(seconds: int) -> bool:
        return yourmemory_strength(seconds, recalls, importance, base_rate) < prune_threshold

    if pruned(0):
        return 0
    low, high = 0, 1  # pruned(high) is unknown, pruned(low) False
    while not pruned(high):
        if high >= MAX_SECONDS:
            return None
        low, high = high, min(2 * high, MAX_SECONDS)
    while high - low > 1:  # pruned(low) False, pruned(high) True
        middle = (low + high) // 2
        low, high = (low, middle) if pruned(middle) else (middle, high)
    return high


@dataclass
class _Strengths:
    """Each held memory's recall count and *due* time, the first time a pass prunes it
    (:func:`yourmemory_prune_second` after its store or last recall, ``None`` past
    ``datetime.max``); a heap of ``(due, store index, id)`` yields the due memories at a pass.
    Strength only falls between recalls, so a pass drops exactly the held memories it finds
    below the threshold."""

    policy: YourMemory
    recalls: dict[Hashable, int] = field(default_factory=dict)  # held, in store order
    due: dict[Hashable, datetime | None] = field(default_factory=dict)
    index: dict[Hashable, int] = field(default_factory=dict)  # held, their store index
    heap: list[tuple[datetime, int, Hashable]] = field(default_factory=list)
    delays: list[timedelta | None] = field(default_factory=list)  # by recall count
    previous: Event | None = None
    stores: int = 0

    SAVED = ("held", "stores", "previous")

    def _schedule(self, mem_id: Hashable, time: datetime) -> None:
        recalls = self.recalls[mem_id]
        delays = self.delays
        while recalls >= len(delays):  # the delay of each recall count, computed once per state
            second = yourmemory_prune_second(len(delays), self.policy)
            delays.append(None if second is None else timedelta(seconds=second))
        delay = delays[recalls]
        try:
            due = None if delay is None else time + delay
        except OverflowError:  # after datetime.max: no event is that late
            due = None
        self.due[mem_id] = due
        if due is not None:
            heapq.heappush(self.heap, (due, self.index[mem_id], mem_id))

    def forget(self, event: Event) -> list[Hashable]:
        previous, self.previous = self.previous, event
        if not is_pass(self.policy.forget_at, event, previous):
            return []
        dropped: list[tuple[int, Hashable]] = []
        while self.heap and self.heap[0][0] <= event.time:
            due, k, mem_id = heapq.heappop(self.heap)
            if self.due.get(mem_id) == due:  # held and not rescheduled by a recall
                dropped.append((k, mem_id))
                del self.recalls[mem_id], self.due[mem_id], self.index[mem_id]
        return [mem_id for _, mem_id in sorted(dropped, key=_first)]  # in store order

    def recall(self, mem_id: Hashable, event: Event) -> None:
        self.recalls[mem_id] += 1
        self._schedule(mem_id, event.time)

    def store(self, event: Event) -> list[Hashable]:
        self.index[event.stored] = self.stores
        self.stores += 1
        self.recalls[event.stored] = 0
        self._schedule(event.stored, event.time)
        return []

    def to_dict(self) -> dict[str, Any]:
        """``{..., "policy", "held": [[id, store index, recalls, due time or None], ...] (store
        order), "stores": memories stored so far, "previous": the last event (turn, time,
        session, stored) or None}``. The heap follows from the due times."""
        due = self.due
        return saved(
            f"{type(self.policy).__name__}.state",
            policy=self.policy.to_dict(),
            held=[[saved_id(m), self.index[m], r, _saved_due(due[m])] for m, r in self.recalls.items()],
            stores=self.stores,
            previous=None if self.previous is None else saved_event(self.previous),
        )

    def restore(self, entries: Mapping[str, Any]) -> None:
        """Fill a fresh store from ``entries``: the held memories, their due times and the heap of
        them (one item each: the same due memories at each pass as the heap the touches made)."""
        self.stores = read_int(entries["stores"], "stores", minimum=0)
        before = -1
        for item in entries["held"]:
            mem_id, i, recalls, due = read_row(item, 4, "held entry")
            read_id(mem_id)
            if mem_id in self.recalls or not (type(i) is int and before < i < self.stores):
                raise ValueError(f"held entry {shown(item)} is not a held memory")
            before = self.index[mem_id] = i
            self.recalls[mem_id] = read_int(recalls, "recalls", minimum=0)
            self.due[mem_id] = None if due is None else read_time(due, "due")
        self.heap = [(due, self.index[m], m) for m, due in self.due.items() if due is not None]
        heapq.heapify(self.heap)
        previous = entries["previous"]
        self.previous = None if previous is None else read_event(previous, "previous")
        if (self.previous is None) != (self.stores == 0):
            raise ValueError(f"previous must be the last event if one was stored, got {shown(previous)}")


def yourmemory_active_days(dates: Sequence[int], since: int, today: int) -> int:
    """``get_active_days_since``: ``#{d in dates : since <= d <= today}``, ``dates`` the sorted
    distinct day numbers with activity (decay.py lines 101-102, 108-133 at ``3b2ed91``).

    The source falls back to wall-clock days when the count is 0 (lines 139-144); on a replay
    the pass's own date is an event date ``>= since``, so the count is at least 1 and the
    fallback never runs.

    >>> yourmemory_active_days([1, 2, 5, 9], 2, 5), yourmemory_active_days([1, 2, 5, 9], 3, 3)
    (2, 0)
    """
    return bisect.bisect_right(dates, today) - bisect.bisect_left(dates, since)


def yourmemory_reinforced(
    ranking: Iterable[tuple[Hashable, float]], threshold: float = YOURMEMORY_REINFORCE
) -> tuple[Hashable, ...]:
    """The ids of a scored ranking that YourMemory reinforces: ``(id, similarity)`` pairs with
    ``similarity >= threshold``, in ranking order (retrieve.py ``_reinforce``, line 282, and
    lines 177-178 at ``3b2ed91`` and ``5a08d41``: ``m["similarity"] >= REINFORCE_THRESHOLD``).

    :class:`Event` ``.recalled`` holds ids, not scores, so no policy can apply the threshold
    to it: apply this to the retriever's top ``k`` and its cosine similarities *before* they
    become ``recalled``. The source compares the cosine, not the hybrid score it ranks by.
    With :func:`~.policies.replay`'s ``k`` (a ranking of every earlier memory, the first ``k``
    held ones recalled), filtering a ranking sorted by the same score first recalls exactly the
    source's "top ``k`` held, then those ``>= threshold``" (both are the held memories at or
    above it, the first ``k`` of them); ``missed_recalls`` then counts only dropped memories at
    or above the threshold.
    ``ValueError`` for a threshold outside ``[-1, 1]`` or a score that is not a finite real.

    >>> yourmemory_reinforced([("a", 0.9), ("b", 0.75), ("c", 0.74)])
    ('a', 'b')
    """
    pairs = list(ranking)
    problems = [real_problem("threshold", threshold, -1.0, 1.0)]
    for pair in pairs:
        if isinstance(pair, tuple | list) and len(pair) == 2:
            problems.append(real_problem(f"score of {shown(pair[0])}", pair[1]))
        else:
            problems.append(f"ranking entry must be an (id, score) pair, got {shown(pair)}")
    raise_problems(problems)
    return tuple(mem_id for mem_id, score in pairs if score >= threshold)


@dataclass
class _ActiveStrengths:
    """YourMemory's store on the active-day clock: each held memory's recall count and the day
    number of its store or last recall; ``dates``, the distinct day numbers of the events seen.
    Strength falls with the count of active dates, so a memory of ``r`` recalls is pruned at the
    first pass that counts ``ceil(yourmemory_prune_second(r) / 86400)`` active dates or more
    (``n * 86400 / 86400 == n`` exactly, so the formula at whole days is the one the job
    computes).

    A store or recall happens on the newest date (``dates[-1]``, at position ``i``) and a pass
    reads the count on the newest date too, so the count is ``len(dates) - i``
    (:func:`yourmemory_active_days`): the memory is *due* when ``len(dates)`` reaches ``i +
    limit``, and a heap of ``(due, store index, id)`` yields the due memories at a pass, as
    :class:`_Strengths` does with due times."""

    policy: YourMemory
    recalls: dict[Hashable, int] = field(default_factory=dict)  # held, in store order
    since: dict[Hashable, int] = field(default_factory=dict)
    index: dict[Hashable, int] = field(default_factory=dict)
    dates: list[int] = field(default_factory=list)
    limits: list[int | None] = field(default_factory=list)  # by recall count
    due: dict[Hashable, int | None] = field(default_factory=dict)  # held: len(dates) that prunes it
    heap: list[tuple[int, int, Hashable]] = field(default_factory=list)
    previous: Event | None = None
    stores: int = 0

    SAVED = ("held", "stores", "dates", "previous")

    def _limit(self, recalls: int) -> int | None:
        while recalls >= len(self.limits):
            second = yourmemory_prune_second(len(self.limits), self.policy)
            self.limits.append(None if second is None else -(-second // 86400))
        return self.limits[recalls]

    def _seen(self, event: Event) -> int:
        today = day_number(event.time)
        if not self.dates or self.dates[-1] != today:
            self.dates.append(today)
        return today

    def _schedule(self, mem_id: Hashable, position: int) -> None:
        """File ``mem_id``, touched on ``dates[position]``, at the count of dates that prunes it."""
        limit = self._limit(self.recalls[mem_id])
        due = None if limit is None else position + limit
        self.due[mem_id] = due
        if due is not None:
            heapq.heappush(self.heap, (due, self.index[mem_id], mem_id))

    def forget(self, event: Event) -> list[Hashable]:
        previous, self.previous = self.previous, event
        self._seen(event)
        if not is_pass(self.policy.forget_at, event, previous):
            return []
        count, heap, due = len(self.dates), self.heap, self.due
        dropped: list[tuple[int, Hashable]] = []
        while heap and heap[0][0] <= count:
            when, k, mem_id = heapq.heappop(heap)
            if due.get(mem_id, -1) == when:  # held and not rescheduled by a recall
                dropped.append((k, mem_id))
                del self.recalls[mem_id], self.since[mem_id], self.index[mem_id], due[mem_id]
        return [mem_id for _, mem_id in sorted(dropped, key=_first)]  # in store order

    def recall(self, mem_id: Hashable, event: Event) -> None:
        self.recalls[mem_id] += 1
        self.since[mem_id] = self._seen(event)
        self._schedule(mem_id, len(self.dates) - 1)

    def store(self, event: Event) -> list[Hashable]:
        self.index[event.stored] = self.stores
        self.stores += 1
        self.recalls[event.stored] = 0
        self.since[event.stored] = self._seen(event)
        self._schedule(event.stored, len(self.dates) - 1)
        return []

    def to_dict(self) -> dict[str, Any]:
        """``{..., "policy", "held": [[id, store index, recalls, day number of the store or last
        recall], ...] (store order), "stores": memories stored so far, "dates": the distinct day
        numbers of the events seen, ascending, "previous": the last event or None}``."""
        return saved(
            f"{type(self.policy).__name__}.state",
            policy=self.policy.to_dict(),
            held=[[saved_id(m), self.index[m], r, self.since[m]] for m, r in self.recalls.items()],
            stores=self.stores,
            dates=list(self.dates),
            previous=None if self.previous is None else saved_event(self.previous),
        )

    def restore(self, entries: Mapping[str, Any]) -> None:
        """Fill a fresh store from ``entries``: the held memories, their days, the active dates."""
        self.stores = read_int(entries["stores"], "stores", minimum=0)
        self.dates = [read_int(day, "date", minimum=1) for day in entries["dates"]]
        if any(a >= b for a, b in zip(self.dates, self.dates[1:], strict=False)):
            raise ValueError(f"dates must be ascending and distinct, got {shown(self.dates)}")
        before = -1
        for item in entries["held"]:
            mem_id, i, recalls, since = read_row(item, 4, "held entry")
            read_id(mem_id)
            if mem_id in self.recalls or not (type(i) is int and before < i < self.stores):
                raise ValueError(f"held entry {shown(item)} is not a held memory")
            before = self.index[mem_id] = i
            self.recalls[mem_id] = read_int(recalls, "recalls", minimum=0)
            self.since[mem_id] = read_int(since, "since", minimum=1)
            position = bisect.bisect_left(self.dates, self.since[mem_id])
            if position == len(self.dates) or self.dates[position] != self.since[mem_id]:
                raise ValueError(f"held entry {shown(item)}: since is not a date of an event")
            self._schedule(mem_id, position)
        previous = entries["previous"]
        self.previous = None if previous is None else read_event(previous, "previous")
        if (self.previous is None) != (self.stores == 0):
            raise ValueError(f"previous must be the last event if one was stored, got {shown(previous)}")


def _first(pair: tuple[int, Hashable]) -> int:
    return pair[0]


def _saved_due(due: datetime | None) -> str | None:
    return None if due is None else saved_time(due)


@dataclass(frozen=True, kw_only=True)
class YourMemory(SavingPolicy):
    """YourMemory's pruning: drop a memory when its strength falls below ``prune_threshold``.

    Strength (:func:`yourmemory_strength`) is
    ``min(1, imp * exp(-lambda_eff * days) * (1 + 0.2 * recalls))`` rounded to 6 decimals, with
    ``lambda_eff = base_rate * (1 - 0.8 * imp)``; ``days`` is whole seconds of real time since
    the memory was stored or last recalled, over 86400 (``clock`` "calendar", the default), or
    the count of active dates since (``clock`` "active", :class:`YourMemoryClock`: what the
    source's decay job passes, so the code's own setting). A memory exactly at the threshold is
    kept (``strength < PRUNE_THRESHOLD`` deletes). The source prunes in a daily job: ``forget_at``
    says when a pass runs here (strength only falls between recalls, so a pass at every turn
    drops each memory at the first turn it is below).

    LoCoMo has no importance score or category: ``importance`` is one number for every turn
    (the source's own default is 0.5), ``base_rate`` the rate of one category.

    **Reinforcement.** The source counts a retrieved memory as recalled only at cosine
    similarity ``>= 0.75`` (:data:`YOURMEMORY_REINFORCE`); :class:`Event` ``.recalled`` holds
    ids, not scores, so the policy cannot apply it: filter the retriever's scored top ``k``
    with :func:`yourmemory_reinforced` before it becomes ``recalled`` (without it, every
    retrieved memory counts, as in the book's published runs).

    **The active-day clock** (``clock`` "active"): at a pass, ``days`` is the number of distinct
    calendar dates with an event from the date of the memory's store or last recall to the
    pass's date, both included (:func:`yourmemory_active_days`); the pass's own event is
    activity of its date (the source records activity at each store and search:
    ``routes/memories.py`` line 147, ``routes/retrieve.py`` lines 41-42 at ``5a08d41``). A
    memory is pruned at the first pass counting ``n`` dates or more, ``n`` the least whole
    number of days at which ``yourmemory_strength`` is below ``prune_threshold``.

    **Not reproduced without the source's stack** (files under ``src/`` at ``3b2ed91``, the same
    lines at ``5a08d41``):

    * ranking by ``0.4 * BM25 + 0.6 * cosine`` (``services/retrieve.py`` lines 16-18,
      ``_score_candidates`` lines 208-231): the replay's retriever ranks as the caller's does;
    * graph expansion and recall propagation: a reinforced memory boosts its graph neighbours'
      ``recall_count`` (``services/retrieve.py`` lines 169-182; ``graph/graph_store.py``
      ``propagate_recall``, line 220);
    * pruning skipped while a graph neighbour is strong (``jobs/decay_job.py`` lines 87-91;
      ``graph/graph_store.py`` ``chain_safe_to_prune``, lines 242-275, ``strength >=
      threshold`` at line 272);
    * merging a near-duplicate at store time: cosine ``>= 0.85`` reinforces the existing memory
      instead of storing (``services/resolve.py`` lines 17, 169-199, 192; ``0.65`` to ``0.85``
      merges or replaces, lines 16, 188-199), and the job's consolidation of pairs at cosine
      ``>= 0.92`` (``jobs/decay_job.py`` lines 22, 126-127, 132-240);
    * category and importance per memory (each stored with its own, ``DECAY_RATES`` lines 15-21).

    Attributes
    ----------
    importance : float, default 1.0
        ``imp`` in (0, 1].
    base_rate : float, default 0.16
        The category's base ``lambda`` per day, ``> 0`` (0.16: "fact", the source's default).
    prune_threshold : float, default 0.05
        In (0, 1).
    forget_at : PassTime or its value, default "turn"
        When a pass runs (:func:`is_pass`); read as the member.
    clock : YourMemoryClock or its value, default "calendar"
        What ``days`` counts: "calendar" (real time, the published runs') or "active" (the
        count of active dates, the source's decay job's). Read as the member.
    """

    importance: float = 1.0
    base_rate: float = YOURMEMORY_FACT_RATE
    prune_threshold: float = YOURMEMORY_PRUNE
    forget_at: PassTime | str = PassTime.TURN
    clock: YourMemoryClock | str = YourMemoryClock.CALENDAR
    #: Added after format 1 was first written: saved only when not calendar, absent reads as calendar.
    LATER_FIELDS: ClassVar[tuple[str, ...]] = ("clock",)

    def __post_init__(self) -> None:
        raise_problems(
            [
                real_problem("importance", self.importance, 0.0, 1.0, low_open=True),
                real_problem("base_rate", self.base_rate, 0.0, low_open=True),
                real_problem(
                    "prune_threshold", self.prune_threshold, 0.0, 1.0, low_open=True, high_open=True
                ),
                choice_problem("forget_at", self.forget_at, PASS_TIMES),
                choice_problem("clock", self.clock, YOURMEMORY_CLOCKS),
            ]
        )
        object.__setattr__(self, "forget_at", PassTime(self.forget_at))
        object.__setattr__(self, "clock", YourMemoryClock(self.clock))

    @property
    def label(self) -> str:
        """E.g. ``YourMemory (imp = 1, λ = 0.16, prune < 0.05, pass per turn)`` (calendar days, as
        published); on the active-day clock ``..., pass per turn, active days)``."""
        active = ", active days" if self.clock == YourMemoryClock.ACTIVE else ""
        return (
            f"YourMemory (imp = {self.importance:g}, λ = {self.base_rate:g}, "
            f"prune < {self.prune_threshold:g}, pass per {self.forget_at}{active})"
        )

    def start(self) -> _Strengths | _ActiveStrengths:
        """An empty store."""
        return _ActiveStrengths(self) if self.clock == YourMemoryClock.ACTIVE else _Strengths(self)
