"""The Memory Worth estimator: two weighted counters per memory, worth computed on read.

Per episode, each retrieved memory adds its weight (1.0 by default) to ``h+`` if the episode
succeeded, else to ``h-`` (:func:`add_weights`); :func:`~forgetting.worth.formulas.memory_worth`
turns the counters into ``MW = h+ / (h+ + h-)`` when asked.

Memory ids
----------
A memory id is any hashable value that is not a ``bool`` and equals itself. ``True == 1`` and
``hash(True) == hash(1)``, so a ``bool`` id would be counted as the memory ``1`` (or ``0``); a
NaN is not equal to itself, so its counters could never be read back. Both are refused, when
written and when read (:func:`memory_key`). Numpy scalars are stored as the Python values they
equal (:func:`plain_id`).

Outcomes are booleans
---------------------
An outcome must be a ``bool`` or a ``numpy.bool_``. Integers (``1``/``0``), floats and strings
are rejected on purpose: the paper writes outcomes as ``y = +1 / -1``, and ``-1`` is truthy in
Python, so silently coercing numbers would count failures as successes.

Settings and state
------------------
Every estimator takes its hyperparameters as keyword arguments only (``MemoryWorth(0.7, 0.3)``
would have been a prior of 0.7 and a ``min_evidence`` of 0.3), and writes its whole state with
``to_dict`` as JSON-safe data that ``from_dict`` reads back into an estimator with the same future.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, MutableMapping, Sequence
from typing import Any, Self

import numpy as np

from .._validate import (
    check_header,
    int_problem,
    is_hashable,
    is_mergeable_id,
    is_real,
    json_header,
    json_id,
    json_rows,
    plain_id,
    raise_problems,
    reading,
    shown,
)
from .formulas import DEFAULT_PRIOR, evidence_volume, memory_worth
from .taxonomy import (
    DEFAULT_HIGH_THRESHOLD,
    DEFAULT_LOW_THRESHOLD,
    DEFAULT_MIN_EVIDENCE,
    WorthClass,
    taxonomy_problems,
    worth_class,
)

__all__ = [
    "MemoryWorth",
    "add_weights",
    "validate_episode",
    "episode_sum_problem",
    "plain_id",
    "memory_key",
    "is_mergeable_id",
    "FORMAT_VERSION",
    "restore_counters",
]

FORMAT_VERSION = 1
"""The ``"version"`` of every estimator's ``to_dict``; ``from_dict`` reads this version only."""


def add_weights(
    successes: MutableMapping[Any, float],
    failures: MutableMapping[Any, float],
    keys: Sequence[Any],
    outcome: bool,
    weights: Sequence[float],
) -> None:
    """Add each key's weight to ``successes`` if ``outcome`` else to ``failures``, in order.

    Both counters of every key exist afterwards (the other one at 0.0 if it was new), so the
    two mappings keep the same keys in order of first retrieval. Unchecked: callers pass
    what :func:`validate_episode` returned.
    """
    hit, miss = (successes, failures) if outcome else (failures, successes)
    for key, weight in zip(keys, weights):
        hit[key] = hit.get(key, 0.0) + weight
        miss.setdefault(key, 0.0)


def episode_sum_problem(
    successes: Mapping[Any, float],
    failures: Mapping[Any, float],
    keys: Sequence[Any],
    outcome: bool,
    weights: Sequence[float],
) -> str | None:
    """``None`` if :func:`add_weights` with these arguments keeps every ``h+ + h-`` finite.

    Counters and weights are finite and ``>= 0``, so a finite ``h+ + h-`` means both counters
    are finite too. Reads the counters, never writes them (so a refused episode changes nothing).
    """
    hit, miss = (successes, failures) if outcome else (failures, successes)
    for key, weight in zip(keys, weights):
        if not math.isfinite(hit.get(key, 0.0) + weight + miss.get(key, 0.0)):
            return (
                f"weights must keep h+ + h- finite (float64): weight {shown(weight)} for memory "
                f"{shown(key)} (h+ = {successes.get(key, 0.0)!r}, h- = {failures.get(key, 0.0)!r}) "
                f"overflows; nothing was added"
            )
    return None


def _is_outcome(success: object) -> bool:
    """A ``bool`` or ``numpy.bool_`` (``-1`` is truthy, so numbers are never outcomes)."""
    return isinstance(success, (bool, np.bool_))


def memory_key(mem_id: Any, name: str = "mem_id", what: str = "memory id") -> Any:
    """``mem_id`` as the key its counters are stored under (:func:`plain_id`), or ``ValueError``
    naming ``name`` for an unhashable value, a ``bool`` or a value not equal to itself."""
    key = plain_id(mem_id)
    if type(key) is str or type(key) is int:  # the common ids, at once
        return key
    if not is_hashable(key):
        raise ValueError(f"{name} must be hashable, got {shown(mem_id)}")
    if is_mergeable_id(key):
        raise ValueError(
            f"{name} must be a {what} that is not a bool and equals itself (True would be the id 1, "
            f"and a NaN is never found again), got {shown(mem_id)}"
        )
    return key


def validate_episode(retrieved: Any, success: Any, weights: Any) -> tuple[list[Any], bool, list[float]]:
    """Check one episode completely; return ``(ids, outcome, weights)`` or raise one ``ValueError``.

    ``retrieved`` is a non-empty sequence (or 1-d array) of distinct hashable ids,
    ``success`` a ``bool``, ``weights`` ``None`` (all 1.0) or one finite weight >= 0 per id.
    The common episode (a list or tuple of distinct ``str`` or ``int`` ids, a ``bool``, no
    weights) takes a shorter path to what the full check returns.
    """
    if weights is None and type(success) is bool and type(retrieved) in (list, tuple):
        ids = list(retrieved)
        if ids and all(type(m) is str or type(m) is int for m in ids) and len(set(ids)) == len(ids):
            return ids, success, [1.0] * len(ids)
    return _validate_fully(retrieved, success, weights)


def _validate_fully(retrieved: Any, success: Any, weights: Any) -> tuple[list[Any], bool, list[float]]:
    """:func:`validate_episode` for any input: every problem found, then one ``ValueError``."""
    problems: list[str] = []
    ids: list[Any] = []
    if isinstance(retrieved, (str, bytes)) or not isinstance(retrieved, (Sequence, np.ndarray)):
        problems.append(
            f"retrieved must be a sequence of memory ids (list, tuple or 1-d array), "
            f"got {type(retrieved).__name__} {retrieved!r}"
        )
    else:
        if isinstance(retrieved, np.ndarray) and retrieved.ndim != 1:
            problems.append(f"retrieved must be 1-d, got an array of shape {retrieved.shape}")
        flat = not isinstance(retrieved, np.ndarray) or retrieved.ndim == 1
        ids = [plain_id(m) for m in retrieved] if flat else []
        if not ids and not problems:
            problems.append("retrieved must not be empty (an episode with no retrieval updates nothing)")
        unhashable: list[Any] = []
        bools: list[Any] = []
        unequal: list[Any] = []
        for m in ids:
            if not is_hashable(m):
                unhashable.append(m)
            elif isinstance(m, bool):
                bools.append(m)
            elif is_mergeable_id(m):
                unequal.append(m)
        if unhashable:
            problems.append(f"memory ids must be hashable, got {shown(unhashable)}")
        if bools:
            problems.append(
                f"memory ids must not be bools (True == 1 and hash(True) == hash(1): they would be "
                f"counted as the ids 1 and 0), got {shown(bools)}"
            )
        if unequal:
            problems.append(
                f"memory ids must equal themselves (a NaN id would be stored and never found again), "
                f"got {shown(unequal)}"
            )
        if not (unhashable or bools or unequal) and len(set(ids)) != len(ids):
            counts: dict[Any, int] = {}
            for m in ids:
                counts[m] = counts.get(m, 0) + 1
            duplicated = [m for m, count in counts.items() if count > 1]
            problems.append(f"retrieved must not repeat an id, got duplicates {duplicated!r}")
    if not _is_outcome(success):
        problems.append(
            f"success must be a bool (True/False or numpy.bool_), got {type(success).__name__} {success!r}"
        )
    values: list[float] = [1.0] * len(ids)
    if weights is not None:
        raw: list[Any] | None = None
        per_id = "one number per retrieved id; nothing is flattened"
        if isinstance(weights, np.ndarray):
            if weights.ndim == 1:
                raw = list(weights)
            else:
                problems.append(f"weights must be 1-d, got shape {weights.shape} ({per_id})")
        elif isinstance(weights, Iterable) and not isinstance(weights, (str, bytes)):
            raw = list(weights)
            if any(isinstance(w, Iterable) and not isinstance(w, (str, bytes)) for w in raw):
                problems.append(f"weights must be 1-d, got a sequence holding sequences ({per_id})")
                raw = None
        else:
            problems.append(f"weights must be a sequence of numbers, got {shown(weights)}")
        if raw is not None:
            if len(raw) != len(ids):
                problems.append(
                    f"weights must have one entry per retrieved id: got {len(raw)} weights for {len(ids)} ids"
                )
            bad = [w for w in raw if not is_real(w) or w < 0]
            if bad:
                problems.append(f"weights must be finite real numbers >= 0, got {bad!r}")
            else:
                values = [float(w) for w in raw]
    raise_problems(problems)
    return ids, bool(success), values


def restore_counters(
    data: dict[str, Any],
    name: str,
    successes: MutableMapping[Any, float],
    failures: MutableMapping[Any, float],
    key_width: int = 1,
) -> None:
    """Fill empty ``successes`` and ``failures`` from the rows ``data[name]`` a ``to_dict`` wrote.

    Each row is ``[*key, h+, h-]``: ``key_width`` ``str`` or ``int`` parts (one: the id; more: the
    tuple), a key not seen before, and two finite real numbers ``>= 0`` with a finite sum (what
    :func:`add_weights` keeps); ``ValueError`` naming the first row that is not.
    """
    for row in json_rows(data, name, key_width + 2):
        *parts, positive, negative = row
        if not all(type(part) is str or type(part) is int for part in parts):
            raise ValueError(f"{name} entry {shown(row)} must hold str or int ids only")
        key = parts[0] if key_width == 1 else tuple(parts)
        if key in successes:
            raise ValueError(f"{name} entry {shown(row)} repeats an id: ids must be distinct")
        counters = (positive, negative)
        if not (all(is_real(c) and c >= 0 for c in counters) and math.isfinite(positive + negative)):
            raise ValueError(
                f"{name} entry {shown(row)} must end in two finite real numbers >= 0 with a finite sum"
            )
        successes[key], failures[key] = float(positive), float(negative)


class WorthEstimator:
    """The hyperparameters every Memory Worth estimator shares, stored under their own names.

    ``__init__`` takes them as keyword arguments only, validates them (all problems at once,
    before any state exists), stores them and calls :meth:`reset`, which each estimator defines
    to create its empty counters. :meth:`from_dict` reads what an estimator's ``to_dict`` wrote:
    ``{"format", "version", "settings": {keyword arguments}, "episodes": n, ...}``.
    """

    FORMAT = "forgetting.WorthEstimator"
    """The ``"format"`` of ``to_dict``; each estimator names its own."""
    n_episodes_: int

    def __init__(
        self,
        *,
        prior: float = DEFAULT_PRIOR,
        min_evidence: float = DEFAULT_MIN_EVIDENCE,
        high_threshold: float = DEFAULT_HIGH_THRESHOLD,
        low_threshold: float = DEFAULT_LOW_THRESHOLD,
    ) -> None:
        raise_problems(taxonomy_problems(prior, min_evidence, high_threshold, low_threshold))
        self.prior = prior
        self.min_evidence = min_evidence
        self.high_threshold = high_threshold
        self.low_threshold = low_threshold
        self.reset()

    def reset(self) -> Self:
        """Forget all evidence (hyperparameters stay)."""
        raise NotImplementedError

    def settings(self) -> dict[str, float]:
        """The keyword arguments this estimator was made with (as floats: JSON-safe)."""
        return {
            "prior": float(self.prior),
            "min_evidence": float(self.min_evidence),
            "high_threshold": float(self.high_threshold),
            "low_threshold": float(self.low_threshold),
        }

    def _state_dict(self, state: dict[str, Any]) -> dict[str, Any]:
        """``to_dict``: the header, the settings, the episodes and the estimator's ``state``."""
        return {
            **json_header(self.FORMAT, FORMAT_VERSION),
            "settings": self.settings(),
            "episodes": int(self.n_episodes_),
            **state,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """The estimator ``to_dict`` wrote (after ``json.loads`` too): same state, same future.

        ``ValueError`` for another format or version, or data that is not what ``to_dict`` writes
        (saying what it got).
        """
        checked = check_header(data, cls.FORMAT, FORMAT_VERSION)
        with reading(cls.__name__):
            settings = checked["settings"]
            if not isinstance(settings, dict):
                raise ValueError(f"data['settings'] must be a dict, got {shown(settings)}")
            estimator = cls(**settings)
            episodes = checked["episodes"]
            raise_problems([int_problem("episodes", episodes, minimum=0)])
            estimator._restore(checked)
            estimator.n_episodes_ = episodes
        return estimator

    def _restore(self, data: dict[str, Any]) -> None:  # pragma: no cover - abstract
        """Fill this fresh estimator's counters from ``data`` (checked as they are read)."""
        raise NotImplementedError


class MemoryWorth(WorthEstimator):
    """Online Memory Worth over hashable memory ids (not ``bool``, not NaN: see the module docstring).

    Parameters
    ----------
    prior : float, default 0.5
        Worth reported while a memory has no evidence (``h+ + h- == 0``), in [0, 1]. Every
        parameter is keyword-only.
    min_evidence : float, default 5.0
        Evidence volume below which a memory is ``uncertain``, >= 0.
    high_threshold : float, default 0.7
        Worth at or above which a memory is ``high-value``, in [0, 1].
    low_threshold : float, default 0.3
        Worth at or below which a memory is ``low-value``, in [0, 1], < ``high_threshold``.

    Attributes
    ----------
    successes_ : dict
        ``h+`` per memory id, in order of first retrieval.
    failures_ : dict
        ``h-`` per memory id, same keys and order as ``successes_``.
    n_episodes_ : int
        Episodes accepted by :meth:`update`.

    Notes
    -----
    ``__init__`` stores and checks the hyperparameters and starts from empty counters (a
    memory store that has seen no episode); nothing is learned until :meth:`update`. Worth is
    computed when read, from the raw counters, as in scikit-learn's naive Bayes.

    Examples
    --------
    >>> mw = MemoryWorth(min_evidence=5.0)
    >>> _ = mw.update(["a", "b"], True).update(["a"], False, weights=[2.0])
    >>> mw.counters("a"), mw.worth("a"), mw.worth("b"), mw.worth("never seen")
    ((1.0, 2.0), 0.3333333333333333, 1.0, 0.5)
    >>> MemoryWorth.from_dict(mw.to_dict()).counters("a")
    (1.0, 2.0)
    """

    FORMAT = "forgetting.MemoryWorth"
    """The ``"format"`` of :meth:`to_dict`."""

    def reset(self) -> Self:
        """Forget all evidence (hyperparameters stay)."""
        self._successes: dict[Any, float] = {}
        self._failures: dict[Any, float] = {}
        self.n_episodes_ = 0
        return self

    @property
    def successes_(self) -> dict[Any, float]:
        """``h+`` per memory id, in order of first retrieval (read it, do not write it)."""
        return self._successes

    @property
    def failures_(self) -> dict[Any, float]:
        """``h-`` per memory id, same keys and order as :attr:`successes_`."""
        return self._failures

    # --- writing --------------------------------------------------------------------------
    def update(
        self, retrieved: Sequence[Hashable], success: bool, weights: Sequence[float] | None = None
    ) -> Self:
        """Record one episode: ``retrieved`` ids, its boolean outcome, optional per-id weights.

        Each retrieved id adds its weight (1.0 by default) to ``h+`` if ``success`` else to
        ``h-``. The whole episode is checked before any counter changes: on a ``ValueError``
        (empty or repeated ids, ``bool`` or NaN ids, non-boolean outcome, weights that are not
        1-d or of the wrong length, negative, NaN or infinite weights, or weights that would make
        some ``h+ + h-`` overflow) the estimator is exactly as before.
        """
        ids, outcome, values = validate_episode(retrieved, success, weights)
        raise_problems([self._sum_problem(ids, outcome, values)])
        self._add(ids, outcome, values)
        self.n_episodes_ += 1
        return self

    def _sum_problem(self, keys: list[Any], outcome: bool, values: list[float]) -> str | None:
        """Why :meth:`_add` of this episode would overflow a counter sum (``None``: it would not)."""
        return episode_sum_problem(self._successes, self._failures, keys, outcome, values)

    def _add(self, keys: list[Any], outcome: bool, values: list[float]) -> None:
        add_weights(self._successes, self._failures, keys, outcome, values)

    # --- reading --------------------------------------------------------------------------
    def counters(self, mem_id: Hashable) -> tuple[float, float]:
        """``(h+, h-)`` of a memory; ``(0.0, 0.0)`` for an id never retrieved.

        ``ValueError`` for an id that could never have been stored (:func:`memory_key`).
        """
        key = memory_key(mem_id)
        return self._successes.get(key, 0.0), self._failures.get(key, 0.0)

    def worth(self, mem_id: Hashable) -> float:
        """Memory Worth of ``mem_id`` (:func:`memory_worth`); the prior if never retrieved."""
        return float(memory_worth(*self.counters(mem_id), prior=self.prior))

    def evidence(self, mem_id: Hashable) -> float:
        """Evidence volume ``h+ + h-`` of ``mem_id`` (:func:`evidence_volume`)."""
        return float(evidence_volume(*self.counters(mem_id)))

    def classify(self, mem_id: Hashable) -> WorthClass:
        """``high-value``, ``uncertain``, ``mixed`` or ``low-value`` (:func:`worth_class`), a :class:`WorthClass`."""
        return WorthClass(
            worth_class(
                self.worth(mem_id),
                self.evidence(mem_id),
                self.min_evidence,
                self.high_threshold,
                self.low_threshold,
            )
        )

    def memory_ids(self) -> list[Any]:
        """Ids retrieved at least once, in order of first retrieval."""
        return list(self._successes)

    # --- JSON -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The whole state as JSON-safe data: ``json.loads(json.dumps(...))`` into :meth:`from_dict`
        gives an estimator whose every later call returns what this one's would, floats bit for bit.

        ``{"format": "forgetting.MemoryWorth", "version": 1, "settings": {keyword arguments},
        "episodes": n, "memories": [[id, h+, h-], ...] (order of first retrieval)}``. ``ValueError``
        naming the first id that is neither a ``str`` nor an ``int`` (JSON reads nothing else back
        as the same id).
        """
        rows = [[json_id(m), h, self._failures[m]] for m, h in self._successes.items()]
        return self._state_dict({"memories": rows})

    def _restore(self, data: dict[str, Any]) -> None:
        restore_counters(data, "memories", self._successes, self._failures)
