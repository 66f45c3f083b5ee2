"""Memory Worth: an outcome-based, two-counter estimate of how useful a memory is.

For every memory ``m`` the estimator keeps two weighted counters:

* ``h+(m)`` -- total weight of episodes in which ``m`` was retrieved and the episode succeeded;
* ``h-(m)`` -- total weight of episodes in which ``m`` was retrieved and the episode failed.

Memory Worth is read from the counters, never stored::

    MW(m) = h+(m) / (h+(m) + h-(m))        (the prior, 0.5 by default, while h+ + h- == 0)

and the evidence volume is ``V(m) = h+(m) + h-(m)``. Rate and volume together sort a memory
into one of four classes (:func:`worth_class`): *uncertain* (too little evidence -- never
deprecate on it), *high-value*, *low-value* (candidate for suppression) and *mixed*.

Under stationarity, infinite exploration and conditional independence of retrieval and outcome
given the history, ``MW(m)`` converges almost surely to ``p+(m) = Pr[success | m retrieved]``.
That is an association, not a causal effect: a useless memory that always travels with a useful
one earns the same worth (see :mod:`forgetting.worlds`, Experiment 4).

What is here
------------
* Pure formulas, each stated once: :func:`memory_worth`, :func:`evidence_volume`,
  :func:`worth_class`, :func:`decayed`.
* Per-retrieval weights: :func:`uniform_weights`, :func:`score_weights`, :func:`oracle_weights`.
* Estimators keyed by arbitrary hashable ids: :class:`MemoryWorth`,
  :class:`ContextualMemoryWorth` (counters per ``(context, mem_id)``) and
  :class:`DiscountedMemoryWorth` (counters decay by ``gamma`` every episode).
* The vectorized form over integer ids ``0 .. n-1``: :func:`update_batch` and
  :class:`WorthArrays`. Fed the same stream, it produces bit-for-bit the same counters as
  :class:`MemoryWorth`, because it adds the same float64 weights in the same order
  (episode by episode, and within an episode in retrieval order).

Outcomes are booleans
---------------------
An outcome must be a ``bool`` or a ``numpy.bool_``. Integers (``1``/``0``), floats and strings
are rejected on purpose: the paper writes outcomes as ``y = +1 / -1``, and ``-1`` is truthy in
Python, so silently coercing numbers would count failures as successes.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_PRIOR", "DEFAULT_MIN_EVIDENCE", "DEFAULT_HIGH_THRESHOLD", "DEFAULT_LOW_THRESHOLD",
    "HIGH_VALUE", "UNCERTAIN", "MIXED", "LOW_VALUE", "WORTH_CLASSES",
    "memory_worth", "evidence_volume", "worth_class", "decayed",
    "uniform_weights", "score_weights", "oracle_weights",
    "MemoryWorth", "ContextualMemoryWorth", "DiscountedMemoryWorth",
    "update_batch", "WorthArrays",
]

DEFAULT_PRIOR = 0.5
"""Worth reported before any evidence: the memory is as likely to help as to hurt."""
DEFAULT_MIN_EVIDENCE = 5.0
"""Evidence volume below which a memory is *uncertain* (five unit-weight retrievals)."""
DEFAULT_HIGH_THRESHOLD = 0.7
"""Worth at or above which a memory with enough evidence is *high-value*."""
DEFAULT_LOW_THRESHOLD = 0.3
"""Worth at or below which a memory with enough evidence is *low-value*."""
DEFAULT_DISCOUNT = 0.99
"""Per-episode decay of :class:`DiscountedMemoryWorth` (effective memory ~ 1/(1-gamma) episodes)."""

HIGH_VALUE = "high-value"
UNCERTAIN = "uncertain"
MIXED = "mixed"
LOW_VALUE = "low-value"
WORTH_CLASSES = (HIGH_VALUE, UNCERTAIN, MIXED, LOW_VALUE)

# The discounted estimator stores counters divided by a global scale; when the scale gets this
# small every stored counter is multiplied back, so that ``weight / scale`` never overflows.
_RESCALE_BELOW = 1e-120


# --- formulas ---------------------------------------------------------------------------------

def _counter(value: Any) -> np.ndarray | None:
    """``value`` as float64 if it is finite, real (not bool) and ``>= 0`` everywhere, else ``None``."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return None
    if np.asarray(value).dtype == np.bool_ or not np.all(np.isfinite(array)) or np.any(array < 0):
        return None
    return array


def _counters(successes: Any, failures: Any) -> tuple[np.ndarray, np.ndarray]:
    """Both counters as float64 arrays; ``ValueError`` unless every value is finite and ``>= 0``."""
    pos, neg = _counter(successes), _counter(failures)
    problems = [f"{name} must be finite real numbers >= 0 (weighted counts), got {value!r}"
                for name, value, array in (("successes", successes, pos), ("failures", failures, neg))
                if array is None]
    if not problems:
        try:
            np.broadcast_shapes(pos.shape, neg.shape)  # type: ignore[union-attr]
        except ValueError:
            problems.append(f"successes and failures must have broadcastable shapes, got "
                            f"{pos.shape} and {neg.shape}")  # type: ignore[union-attr]
    if problems:
        raise ValueError("; ".join(problems))
    return pos, neg  # type: ignore[return-value]


def memory_worth(successes: Any, failures: Any, prior: float = DEFAULT_PRIOR) -> Any:
    """Memory Worth ``MW = h+ / (h+ + h-)``, and ``prior`` where ``h+ + h- == 0``.

    Works element-wise on arrays; returns a ``float`` for scalar input. Counters must be
    finite and ``>= 0`` (``ValueError`` otherwise), so a zero total means no evidence at all.

    >>> memory_worth(3.0, 1.0)
    0.75
    >>> memory_worth(0.0, 0.0)
    0.5
    """
    pos, neg = _counters(successes, failures)
    total = pos + neg
    has_evidence = total > 0
    rate = np.divide(pos, total, out=np.full(total.shape, float(prior)), where=has_evidence)
    return float(rate) if rate.ndim == 0 else rate


def evidence_volume(successes: Any, failures: Any) -> Any:
    """Evidence volume ``V = h+ + h-`` (element-wise on arrays; counters finite and ``>= 0``)."""
    total = np.add(*_counters(successes, failures))
    return float(total) if np.ndim(total) == 0 else total


def worth_class(worth: Any, evidence: Any, min_evidence: float = DEFAULT_MIN_EVIDENCE,
                high_threshold: float = DEFAULT_HIGH_THRESHOLD,
                low_threshold: float = DEFAULT_LOW_THRESHOLD) -> Any:
    """The taxonomy from rate and volume, checked in this order.

    1. ``uncertain``  if ``evidence < min_evidence`` (never deprecate on it);
    2. ``high-value`` if ``worth >= high_threshold``;
    3. ``low-value``  if ``worth <= low_threshold`` (candidate for suppression);
    4. ``mixed``      otherwise (ambiguous rate with enough evidence).

    Works element-wise on arrays (returns an array of labels); returns a ``str`` for
    scalar input.

    >>> worth_class(0.7, 5.0)
    'high-value'
    >>> worth_class(0.9, 4.0)
    'uncertain'
    """
    worth = np.asarray(worth, dtype=np.float64)
    evidence = np.asarray(evidence, dtype=np.float64)
    labels = np.select(
        [evidence < min_evidence, worth >= high_threshold, worth <= low_threshold],
        [UNCERTAIN, HIGH_VALUE, LOW_VALUE], default=MIXED)
    return str(labels) if labels.ndim == 0 else labels


def decayed(counter: float, discount: float, episodes: int = 1) -> float:
    """A counter after ``episodes`` discounted episodes without a retrieval: ``gamma**n * h``."""
    return counter * discount ** episodes


# --- weights ----------------------------------------------------------------------------------

def uniform_weights(n_retrieved: int) -> np.ndarray:
    """Every retrieved memory gets weight 1.0 (the default of every ``update``)."""
    if isinstance(n_retrieved, bool) or not isinstance(n_retrieved, (int, np.integer)) or n_retrieved < 1:
        raise ValueError(f"n_retrieved must be an int >= 1, got {n_retrieved!r}")
    return np.ones(int(n_retrieved))


def score_weights(scores: Sequence[float] | np.ndarray, normalize: bool = True) -> np.ndarray:
    """Weights proportional to the retrieval scores: ``w_i = s_i / sum_j s_j``.

    With ``normalize=True`` (default) every episode hands out one unit of credit in total,
    so an episode that retrieves ten memories does not count ten times as much as one that
    retrieves a single memory. With ``normalize=False`` the raw scores are the weights.
    Scores must be finite and ``>= 0``: clip or shift cosine similarities first (a negative
    weight would subtract evidence). With ``normalize=True`` at least one score must be > 0.
    """
    values = np.asarray(scores, dtype=np.float64)
    problems = []
    if values.ndim != 1 or values.size == 0:
        problems.append(f"scores must be a non-empty 1-d sequence, got shape {values.shape}")
    elif not np.all(np.isfinite(values)) or np.any(values < 0):
        problems.append(f"scores must be finite and >= 0, got {values.tolist()}")
    elif normalize and values.sum() == 0:
        problems.append("scores must not all be 0 when normalize=True (nothing to share credit by)")
    if problems:
        raise ValueError("; ".join(problems))
    return values / values.sum() if normalize else values.copy()


def oracle_weights(retrieved: Sequence[int] | np.ndarray, utilities: Sequence[float] | np.ndarray,
                   normalize: bool = False) -> np.ndarray:
    """Weights equal to the known true utility of each retrieved memory (controlled worlds only).

    ``retrieved`` are integer indices into ``utilities``. Raw utilities by default (a memory
    with utility 0 collects no evidence at all); ``normalize=True`` rescales them to sum to 1
    as in :func:`score_weights`.
    """
    utility = np.asarray(utilities, dtype=np.float64)
    index = np.asarray(retrieved)
    if index.ndim != 1 or not np.issubdtype(index.dtype, np.integer):
        raise ValueError(f"retrieved must be a 1-d sequence of int indices, got {retrieved!r}")
    if index.size and (index.min() < 0 or index.max() >= utility.size):
        raise ValueError(f"retrieved indices must be in [0, {utility.size}), got {index.tolist()}")
    return score_weights(utility[index], normalize=normalize)


# --- validation -------------------------------------------------------------------------------

def _is_real(value: object) -> bool:
    """A finite int or float (``bool`` excluded: ``True`` is not a weight or a threshold)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _check_hyperparameters(**ranges: tuple[Any, float, float, str]) -> list[str]:
    """Collect one message per bad value: ``name=(value, low, high, description)``."""
    problems = []
    for name, (value, low, high, allowed) in ranges.items():
        if not _is_real(value) or not low <= value <= high:
            problems.append(f"{name} must be {allowed}, got {value!r}")
    return problems


def _check_taxonomy(prior: float, min_evidence: float, high_threshold: float,
                    low_threshold: float) -> list[str]:
    problems = _check_hyperparameters(
        prior=(prior, 0.0, 1.0, "a real number in [0, 1]"),
        min_evidence=(min_evidence, 0.0, math.inf, "a finite real number >= 0"),
        high_threshold=(high_threshold, 0.0, 1.0, "a real number in [0, 1]"),
        low_threshold=(low_threshold, 0.0, 1.0, "a real number in [0, 1]"),
    )
    if not problems and not low_threshold < high_threshold:
        problems.append(f"low_threshold must be < high_threshold, got low_threshold={low_threshold!r} "
                        f"and high_threshold={high_threshold!r}")
    return problems


def _is_outcome(success: object) -> bool:
    return isinstance(success, (bool, np.bool_))


def _is_hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _plain_id(mem_id: Any) -> Any:
    # numpy scalars hash and compare like Python numbers; store the Python value.
    return mem_id.item() if isinstance(mem_id, np.generic) else mem_id


def _validate_episode(retrieved: Any, success: Any, weights: Any) -> tuple[list[Any], bool, list[float]]:
    """Check one episode completely; return (ids, outcome, weights) or raise one ValueError."""
    problems: list[str] = []
    ids: list[Any] = []
    if isinstance(retrieved, (str, bytes)) or not isinstance(retrieved, (Sequence, np.ndarray)):
        problems.append(f"retrieved must be a sequence of memory ids (list, tuple or 1-d array), "
                        f"got {type(retrieved).__name__} {retrieved!r}")
    else:
        if isinstance(retrieved, np.ndarray) and retrieved.ndim != 1:
            problems.append(f"retrieved must be 1-d, got an array of shape {retrieved.shape}")
        flat = not isinstance(retrieved, np.ndarray) or retrieved.ndim == 1
        ids = [_plain_id(m) for m in retrieved] if flat else []
        if not ids and not problems:
            problems.append("retrieved must not be empty (an episode with no retrieval updates nothing)")
        unhashable = [m for m in ids if not _is_hashable(m)]
        if unhashable:
            problems.append(f"memory ids must be hashable, got {unhashable!r}")
        elif len(set(ids)) != len(ids):
            counts: dict[Any, int] = {}
            for m in ids:
                counts[m] = counts.get(m, 0) + 1
            duplicated = [m for m, count in counts.items() if count > 1]
            problems.append(f"retrieved must not repeat an id, got duplicates {duplicated!r}")
    if not _is_outcome(success):
        problems.append(f"success must be a bool (True/False or numpy.bool_), got "
                        f"{type(success).__name__} {success!r}")
    values: list[float] = [1.0] * len(ids)
    if weights is not None:
        raw = list(np.asarray(weights, dtype=object).ravel()) if isinstance(weights, np.ndarray) \
            else list(weights) if isinstance(weights, Iterable) and not isinstance(weights, (str, bytes)) \
            else None
        if raw is None:
            problems.append(f"weights must be a sequence of numbers, got {weights!r}")
        else:
            if len(raw) != len(ids):
                problems.append(f"weights must have one entry per retrieved id: got {len(raw)} weights "
                                f"for {len(ids)} ids")
            bad = [w for w in raw if not _is_real(w) or w < 0]
            if bad:
                problems.append(f"weights must be finite real numbers >= 0, got {bad!r}")
            else:
                values = [float(w) for w in raw]
    if problems:
        raise ValueError("; ".join(problems))
    return ids, bool(success), values


# --- scalar estimators --------------------------------------------------------------------------

class MemoryWorth:
    """Online Memory Worth over arbitrary hashable memory ids.

    Parameters
    ----------
    prior : float, default 0.5
        Worth reported while a memory has no evidence (``h+ + h- == 0``), in [0, 1].
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
    >>> mw = MemoryWorth()
    >>> _ = mw.update(["a", "b"], True).update(["a"], False, weights=[2.0])
    >>> mw.counters("a"), mw.worth("a"), mw.worth("b"), mw.worth("never seen")
    ((1.0, 2.0), 0.3333333333333333, 1.0, 0.5)
    """

    def __init__(self, prior: float = DEFAULT_PRIOR, min_evidence: float = DEFAULT_MIN_EVIDENCE,
                 high_threshold: float = DEFAULT_HIGH_THRESHOLD,
                 low_threshold: float = DEFAULT_LOW_THRESHOLD) -> None:
        problems = _check_taxonomy(prior, min_evidence, high_threshold, low_threshold)
        if problems:
            raise ValueError("; ".join(problems))
        self.prior = prior
        self.min_evidence = min_evidence
        self.high_threshold = high_threshold
        self.low_threshold = low_threshold
        self.reset()

    def reset(self) -> "MemoryWorth":
        """Forget all evidence (hyperparameters stay)."""
        self.successes_: dict[Any, float] = {}
        self.failures_: dict[Any, float] = {}
        self.n_episodes_ = 0
        return self

    # --- writing --------------------------------------------------------------------------
    def update(self, retrieved: Sequence[Hashable], success: bool,
               weights: Sequence[float] | None = None) -> "MemoryWorth":
        """Record one episode: ``retrieved`` ids, its boolean outcome, optional per-id weights.

        Each retrieved id adds its weight (1.0 by default) to ``h+`` if ``success`` else to
        ``h-``. The whole episode is checked before any counter changes: on a ``ValueError``
        (empty or repeated ids, non-boolean outcome, weights of the wrong length, negative,
        NaN or infinite weights) the estimator is exactly as before.
        """
        ids, outcome, values = _validate_episode(retrieved, success, weights)
        self._add(ids, outcome, values)
        self.n_episodes_ += 1
        return self

    def _add(self, keys: list[Any], outcome: bool, values: list[float]) -> None:
        hit, miss = (self.successes_, self.failures_) if outcome else (self.failures_, self.successes_)
        for key, weight in zip(keys, values):
            hit[key] = hit.get(key, 0.0) + weight
            miss.setdefault(key, 0.0)

    # --- reading --------------------------------------------------------------------------
    def counters(self, mem_id: Hashable) -> tuple[float, float]:
        """``(h+, h-)`` of a memory; ``(0.0, 0.0)`` for an id never retrieved."""
        key = _plain_id(mem_id)
        return self.successes_.get(key, 0.0), self.failures_.get(key, 0.0)

    def worth(self, mem_id: Hashable) -> float:
        """Memory Worth of ``mem_id`` (:func:`memory_worth`); the prior if never retrieved."""
        return memory_worth(*self.counters(mem_id), prior=self.prior)

    def evidence(self, mem_id: Hashable) -> float:
        """Evidence volume ``h+ + h-`` of ``mem_id`` (:func:`evidence_volume`)."""
        return evidence_volume(*self.counters(mem_id))

    def classify(self, mem_id: Hashable) -> str:
        """``high-value``, ``uncertain``, ``mixed`` or ``low-value`` (:func:`worth_class`)."""
        return worth_class(self.worth(mem_id), self.evidence(mem_id), self.min_evidence,
                           self.high_threshold, self.low_threshold)

    def memory_ids(self) -> list[Any]:
        """Ids retrieved at least once, in order of first retrieval."""
        return list(self.successes_)


class ContextualMemoryWorth(MemoryWorth):
    """Memory Worth with separate counters per ``(context, mem_id)``.

    Conditioning on a context (a task type, a query cluster) compares a memory only with
    episodes of the same kind, which removes a confound when retrieval depends on how hard
    the task is (Experiment 2 in :mod:`forgetting.worlds`). Keys of ``successes_`` and
    ``failures_`` are ``(context, mem_id)`` pairs; ``context`` must be hashable.

    >>> cmw = ContextualMemoryWorth()
    >>> _ = cmw.update(["a"], False, context="hard").update(["a"], True, context="easy")
    >>> cmw.worth("a", "hard"), cmw.worth("a", "easy"), cmw.pooled_worth("a")
    (0.0, 1.0, 0.5)
    """

    def update(self, retrieved: Sequence[Hashable], success: bool,  # type: ignore[override]
               weights: Sequence[float] | None = None, *, context: Hashable) -> "ContextualMemoryWorth":
        """Record one episode of ``context`` (keyword-only, required); see :meth:`MemoryWorth.update`."""
        if not _is_hashable(context):
            raise ValueError(f"context must be hashable, got {context!r}")
        ids, outcome, values = _validate_episode(retrieved, success, weights)
        context = _plain_id(context)
        self._add([(context, m) for m in ids], outcome, values)
        self.n_episodes_ += 1
        return self

    def counters(self, mem_id: Hashable, context: Hashable) -> tuple[float, float]:  # type: ignore[override]
        key = (_plain_id(context), _plain_id(mem_id))
        return self.successes_.get(key, 0.0), self.failures_.get(key, 0.0)

    def worth(self, mem_id: Hashable, context: Hashable) -> float:  # type: ignore[override]
        """Memory Worth of ``mem_id`` within ``context``; the prior without evidence there."""
        return memory_worth(*self.counters(mem_id, context), prior=self.prior)

    def evidence(self, mem_id: Hashable, context: Hashable) -> float:  # type: ignore[override]
        return evidence_volume(*self.counters(mem_id, context))

    def classify(self, mem_id: Hashable, context: Hashable) -> str:  # type: ignore[override]
        return worth_class(self.worth(mem_id, context), self.evidence(mem_id, context),
                           self.min_evidence, self.high_threshold, self.low_threshold)

    def pooled_counters(self, mem_id: Hashable) -> tuple[float, float]:
        """Counters summed over contexts (in order of first appearance), i.e. the unconditioned ones."""
        mem_id = _plain_id(mem_id)
        pos = neg = 0.0
        for key, value in self.successes_.items():
            if key[1] == mem_id:
                pos += value
                neg += self.failures_[key]
        return pos, neg

    def pooled_worth(self, mem_id: Hashable) -> float:
        """Worth from the counters summed over all contexts (ignores the conditioning)."""
        return memory_worth(*self.pooled_counters(mem_id), prior=self.prior)

    def contexts(self) -> list[Any]:
        """Contexts seen so far, in order of first appearance."""
        return list(dict.fromkeys(c for c, _ in self.successes_))

    def memory_ids(self) -> list[Any]:
        return list(dict.fromkeys(m for _, m in self.successes_))


class DiscountedMemoryWorth(MemoryWorth):
    """Memory Worth whose counters decay by ``discount`` every episode.

    Direct definition, per episode: first every counter of every memory decays,
    ``h <- gamma * h``, then the retrieved memories add their weights as usual. Old outcomes
    fade with weight ``gamma**age``, so the estimate follows a task distribution that shifts
    (a stale memory loses its worth within about ``1 / (1 - gamma)`` episodes).

    The price: with ``gamma < 1`` the strict almost-sure convergence to ``p+(m)`` is lost.
    The estimator tracks a moving average; even under stationarity it keeps a variance floor
    of order ``(1 - gamma)`` instead of shrinking like ``1 / n``. ``gamma = 1`` is the plain
    estimator. Evidence decays too, so an unused memory drifts back to ``uncertain``; its
    rate keeps its last value (both counters shrink together).

    Implementation: counters are stored divided by a global scale ``s`` (``h = stored * s``);
    an episode multiplies ``s`` by ``gamma`` and adds ``weight / s``, so an update costs
    O(retrieved) instead of O(all memories). When ``s`` falls below 1e-120 all stored values
    are multiplied by ``s`` once and ``s`` is reset to 1. Values agree with the direct
    definition to rounding error (relative 1e-12 over long streams, tested).

    Parameters
    ----------
    discount : float, default 0.99
        ``gamma`` in (0, 1].
    prior, min_evidence, high_threshold, low_threshold :
        As in :class:`MemoryWorth`.
    """

    def __init__(self, discount: float = DEFAULT_DISCOUNT, prior: float = DEFAULT_PRIOR,
                 min_evidence: float = DEFAULT_MIN_EVIDENCE,
                 high_threshold: float = DEFAULT_HIGH_THRESHOLD,
                 low_threshold: float = DEFAULT_LOW_THRESHOLD) -> None:
        problems = _check_hyperparameters(discount=(discount, 0.0, 1.0, "a real number in (0, 1]"))
        if not problems and discount == 0:
            problems.append(f"discount must be a real number in (0, 1], got {discount!r}")
        problems += _check_taxonomy(prior, min_evidence, high_threshold, low_threshold)
        if problems:
            raise ValueError("; ".join(problems))
        self.discount = discount
        super().__init__(prior, min_evidence, high_threshold, low_threshold)

    def reset(self) -> "DiscountedMemoryWorth":
        self._scaled_successes: dict[Any, float] = {}
        self._scaled_failures: dict[Any, float] = {}
        self._scale = 1.0
        self.n_episodes_ = 0
        return self

    @property
    def successes_(self) -> dict[Any, float]:  # type: ignore[override]
        """Discounted ``h+`` per memory id (computed from the scaled store)."""
        return {m: v * self._scale for m, v in self._scaled_successes.items()}

    @property
    def failures_(self) -> dict[Any, float]:  # type: ignore[override]
        """Discounted ``h-`` per memory id (computed from the scaled store)."""
        return {m: v * self._scale for m, v in self._scaled_failures.items()}

    def _add(self, keys: list[Any], outcome: bool, values: list[float]) -> None:
        self._scale = decayed(self._scale, self.discount)
        if self._scale < _RESCALE_BELOW:
            for store in (self._scaled_successes, self._scaled_failures):
                for m in store:
                    store[m] *= self._scale
            self._scale = 1.0
        hit, miss = ((self._scaled_successes, self._scaled_failures) if outcome
                     else (self._scaled_failures, self._scaled_successes))
        for key, weight in zip(keys, values):
            hit[key] = hit.get(key, 0.0) + weight / self._scale
            miss.setdefault(key, 0.0)

    def counters(self, mem_id: Hashable) -> tuple[float, float]:
        key = _plain_id(mem_id)
        return (self._scaled_successes.get(key, 0.0) * self._scale,
                self._scaled_failures.get(key, 0.0) * self._scale)

    def memory_ids(self) -> list[Any]:
        return list(self._scaled_successes)


# --- vectorized form ---------------------------------------------------------------------------

def _validate_batch(successes: np.ndarray, failures: np.ndarray, retrieved_idx: Any, outcomes: Any,
                    weights: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    problems = []
    for name, counter in (("successes", successes), ("failures", failures)):
        if not isinstance(counter, np.ndarray) or counter.dtype != np.float64 or counter.ndim != 1:
            problems.append(f"{name} must be a 1-d float64 numpy array (updated in place), got "
                            f"{getattr(counter, 'dtype', type(counter).__name__)} "
                            f"shape {getattr(counter, 'shape', None)}")
    if problems:
        raise ValueError("; ".join(problems))
    if successes.shape != failures.shape:
        raise ValueError(f"successes and failures must have the same shape, got {successes.shape} "
                         f"and {failures.shape}")
    if np.shares_memory(successes, failures):
        raise ValueError("successes and failures must be distinct arrays, got the same or overlapping "
                         "memory (every failure would also be written into the successes)")
    n_memories = successes.size
    index = np.asarray(retrieved_idx)
    outcome = np.asarray(outcomes)
    if index.ndim != 2 or not np.issubdtype(index.dtype, np.integer) or index.shape[1] == 0:
        problems.append(f"retrieved_idx must be a 2-d int array (episodes x k, k >= 1), got dtype "
                        f"{index.dtype} shape {index.shape}")
    else:
        if index.size and (index.min() < 0 or index.max() >= n_memories):
            problems.append(f"retrieved_idx must be in [0, {n_memories}), got values in "
                            f"[{index.min()}, {index.max()}]")
        ordered = np.sort(index, axis=1)
        repeated = np.flatnonzero(np.any(ordered[:, 1:] == ordered[:, :-1], axis=1))
        if repeated.size:
            problems.append(f"retrieved_idx must not repeat an id within an episode, episodes "
                            f"{repeated[:10].tolist()} do")
    if outcome.dtype != np.bool_ or outcome.ndim != 1:
        problems.append(f"outcomes must be a 1-d bool array, got dtype {outcome.dtype} shape {outcome.shape}")
    elif index.ndim == 2 and outcome.shape[0] != index.shape[0]:
        problems.append(f"outcomes must have one entry per episode: got {outcome.shape[0]} for "
                        f"{index.shape[0]} episodes")
    weight = None
    if weights is not None:
        weight = np.asarray(weights)
        if weight.shape != index.shape:
            problems.append(f"weights must have the shape of retrieved_idx {index.shape}, got {weight.shape}")
        elif not (np.issubdtype(weight.dtype, np.integer) or np.issubdtype(weight.dtype, np.floating)):
            problems.append(f"weights must be real numbers, got dtype {weight.dtype}")
        else:
            weight = weight.astype(np.float64)
            if not np.all(np.isfinite(weight)) or np.any(weight < 0):
                problems.append("weights must be finite and >= 0")
    if problems:
        raise ValueError("; ".join(problems))
    return index, outcome, weight


def _add_episodes(successes: np.ndarray, failures: np.ndarray, retrieved_idx: np.ndarray,
                  outcomes: np.ndarray, weights: np.ndarray | None = None) -> None:
    """Unchecked core of :func:`update_batch` (callers guarantee valid input)."""
    if weights is None:
        weights = np.ones(retrieved_idx.shape)
    # Row-major ravel keeps episode order, then retrieval order: np.add.at applies the
    # additions one by one in that order, exactly like the scalar loop.
    hit = np.repeat(outcomes, retrieved_idx.shape[1])
    index = retrieved_idx.ravel()
    weight = weights.ravel()
    np.add.at(successes, index[hit], weight[hit])
    np.add.at(failures, index[~hit], weight[~hit])


def update_batch(successes: np.ndarray, failures: np.ndarray, retrieved_idx: npt.ArrayLike,
                 outcomes: npt.ArrayLike, weights: npt.ArrayLike | None = None) -> None:
    """Add a block of episodes to counter arrays, in place.

    Parameters
    ----------
    successes, failures : ndarray of float64, shape (n_memories,)
        ``h+`` and ``h-`` of memories ``0 .. n_memories - 1``; modified in place.
    retrieved_idx : int array, shape (episodes, k)
        Row ``t`` holds the ``k`` distinct memories retrieved in episode ``t``.
    outcomes : bool array, shape (episodes,)
        Success of each episode.
    weights : array, shape (episodes, k), optional
        Per-retrieval weights (finite, >= 0); 1.0 when omitted.

    Every counter receives its additions one at a time in episode order and, within an
    episode, in column order, which is the order in which :meth:`MemoryWorth.update` adds
    them. The resulting float64 values are therefore identical bit for bit to the scalar
    estimator fed the same episodes (ids ``i`` mapped to memory ``i``), for any weights.
    All input is checked before anything is added.
    """
    index, outcome, weight = _validate_batch(successes, failures, retrieved_idx, outcomes, weights)
    _add_episodes(successes, failures, index, outcome, weight)


class WorthArrays:
    """Memory Worth for memories ``0 .. n_memories - 1`` held in two float64 arrays.

    The vectorized counterpart of :class:`MemoryWorth` (same hyperparameters, same
    formulas); :meth:`update_batch` takes a whole block of episodes at once.

    >>> arrays = WorthArrays(3).update_batch([[0, 1], [1, 2]], [True, False])
    >>> arrays.successes_.tolist(), arrays.failures_.tolist(), arrays.worth().tolist()
    ([1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.5, 0.0])
    """

    def __init__(self, n_memories: int, prior: float = DEFAULT_PRIOR,
                 min_evidence: float = DEFAULT_MIN_EVIDENCE,
                 high_threshold: float = DEFAULT_HIGH_THRESHOLD,
                 low_threshold: float = DEFAULT_LOW_THRESHOLD) -> None:
        problems = []
        if isinstance(n_memories, (bool, np.bool_)) or not isinstance(n_memories, (int, np.integer)) \
                or n_memories < 1:
            problems.append(f"n_memories must be an int >= 1, got {n_memories!r}")
        problems += _check_taxonomy(prior, min_evidence, high_threshold, low_threshold)
        if problems:
            raise ValueError("; ".join(problems))
        self.n_memories = int(n_memories)
        self.prior = prior
        self.min_evidence = min_evidence
        self.high_threshold = high_threshold
        self.low_threshold = low_threshold
        self.reset()

    def reset(self) -> "WorthArrays":
        """Zero all counters."""
        self.successes_ = np.zeros(self.n_memories)
        self.failures_ = np.zeros(self.n_memories)
        self.n_episodes_ = 0
        return self

    def update_batch(self, retrieved_idx: npt.ArrayLike, outcomes: npt.ArrayLike,
                     weights: npt.ArrayLike | None = None) -> "WorthArrays":
        """Add a block of episodes (see :func:`update_batch`)."""
        index, outcome, weight = _validate_batch(self.successes_, self.failures_, retrieved_idx,
                                                 outcomes, weights)
        _add_episodes(self.successes_, self.failures_, index, outcome, weight)
        self.n_episodes_ += index.shape[0]
        return self

    def worth(self) -> np.ndarray:
        """Memory Worth of every memory (:func:`memory_worth`)."""
        return memory_worth(self.successes_, self.failures_, prior=self.prior)

    def evidence(self) -> np.ndarray:
        """Evidence volume of every memory (:func:`evidence_volume`)."""
        return evidence_volume(self.successes_, self.failures_)

    def classify(self) -> np.ndarray:
        """Taxonomy label of every memory (:func:`worth_class`)."""
        return worth_class(self.worth(), self.evidence(), self.min_evidence,
                           self.high_threshold, self.low_threshold)
