"""The model shared by the Memory Worth experiments: memories, retrieval, outcomes, ``p+``.

Every world is a frozen dataclass of settings plus a pure function of ``(world, seed)``.
Randomness comes only from ``numpy.random.default_rng`` seeded by the caller (per-seed streams
are children of ``numpy.random.SeedSequence(seed)``, :func:`seed_streams`); nothing reads a
clock or the global random state, so the same seed gives identical floats. Counters are updated
with :func:`forgetting.worth.add_episodes`.

What a run records never changes what it draws. A run's setup (the utilities) comes from
``default_rng(seed)``; every kind of per-episode draw has its own stream (:func:`substream`:
:data:`RETRIEVAL_STREAM`, :data:`OUTCOME_STREAM`, :data:`TASK_STREAM`) and reads a fixed number
of values from it per episode, in episode order (Experiment 4 adds :data:`PAIR_STREAM`,
:data:`BREAK_STREAM` and :data:`KEEP_STREAM`). Episode ``t`` therefore sees the same numbers
whether the run is drawn at once, in blocks of :data:`BLOCK_EPISODES`, between whatever
checkpoints are recorded, or stopped after ``t`` episodes: the first ``t`` episodes of a longer
run are the shorter run.

The paper ("When to Forget: A Memory Governance Primitive", arXiv:2604.12007) does not publish
all of its simulation settings. Every setting it leaves open is a named field with a default;
each world's docstring says how the default was chosen, and each chapter reports what it gives.

* Memory ``m`` has a known utility ``u_m`` in [0, 1].
* An episode retrieves ``k`` distinct memories ``M``.
* Outcome model (:func:`success_probability`)::

      Pr[success | M, task type c] = base_c + effect * (mean_{m in M} u_m - 1/2)

  With ``base = 0.5`` and ``effect = 1`` this is ``Pr[success] = mean utility of the retrieved
  set``: every retrieved memory contributes equally, and credit is shared among ``k`` memories.
* Under uniform retrieval of ``k`` out of a pool of ``n`` memories the limit of Memory Worth
  has a closed form (:func:`expected_retrieved_utility`, :func:`p_plus_uniform`)::

      p+(m) = base + effect * (u_m / k + (k - 1) / k * (U - u_m) / (n - 1) - 1/2)

  with ``U`` the pool's total utility. It is increasing in ``u_m`` whenever ``n > k`` but is
  squeezed into a band of width ``effect / k``: co-retrieval dilutes credit.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import fields
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ..._validate import int_problem, is_int, is_real, raise_problems, require_int, seed_problem
from ...worth import add_episodes
from ..stats import mean_sd

__all__ = [
    "DEFAULT_N_SEEDS",
    "SEPARATION_Z",
    "BLOCK_EPISODES",
    "FloatArray",
    "IntArray",
    "spearman_rho",
    "success_probability",
    "expected_retrieved_utility",
    "p_plus_uniform",
    "p_plus_by_enumeration",
    "uniform_retrieval",
    "smallest_in_order",
    "softmax_retrieval",
    "retrieval_entropy",
    "loglog_slope",
    "separated",
    "seed_streams",
    "RETRIEVAL_STREAM",
    "OUTCOME_STREAM",
    "TASK_STREAM",
    "PAIR_STREAM",
    "BREAK_STREAM",
    "KEEP_STREAM",
    "substream",
    "check_world",
    "check_n_seeds",
    "check_checkpoints",
    "replace_world",
    "depths_to_checkpoints",
    "episodes_to_checkpoints",
]

FloatArray = npt.NDArray[np.float64]
"""A float64 numpy array."""
IntArray = npt.NDArray[np.intp]
"""An index array."""

DEFAULT_N_SEEDS = 20
"""Seeds per experiment, as in the paper's Experiment 1."""
SEPARATION_Z = 1.645
"""Experiment 4: anchor and hitchhiker are *separated* when mean gap - 1.645 * sd(gap) > 0."""
BLOCK_EPISODES = 4096
"""Episodes drawn per block when random numbers are generated in pieces (keeps memory bounded).
No result depends on it: each stream holds one kind of draw, a fixed number per episode, and
numpy's generators give the same values whether drawn at once or in blocks of rows."""
RETRIEVAL_STREAM = 0
"""Index of a run's retrieval stream (:func:`substream`): the keys of :func:`uniform_retrieval`
or the Gumbel noise of :func:`softmax_retrieval`, one per memory per episode."""
OUTCOME_STREAM = 1
"""Index of a run's outcome stream: one uniform per episode, compared with its success probability."""
TASK_STREAM = 2
"""Index of a run's task stream: one uniform per episode that picks the task type (Experiment 2)."""
PAIR_STREAM = 3
"""Index of a run's pair stream (Experiment 4): one uniform per episode, a pair episode when it
is below the pair rate."""
BREAK_STREAM = 4
"""Index of a run's break stream (Experiment 4): one uniform per pair episode, the pair broken
when it is below the diversity."""
KEEP_STREAM = 5
"""Index of a run's keep stream (Experiment 4): one uniform per pair episode, the anchor kept
alone in a broken pair when it is below 1/2 (the hitchhiker otherwise)."""

_World = TypeVar("_World")


def spearman_rho(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman rank correlation: Pearson correlation of the ranks (ties get average ranks).

    Defined as ``0.0`` when either vector is constant (the rank correlation is 0/0 there).
    That is the value the paper reports for a never-updating baseline, whose worth is the
    prior for every memory: a constant carries no ranking information.
    """
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ValueError(f"x and y must be 1-d of equal length >= 2, got shapes {a.shape} and {b.shape}")
    from scipy.stats import rankdata  # imported here: scipy.stats takes a second to import

    rank_a, rank_b = rankdata(a), rankdata(b)
    if np.all(rank_a == rank_a[0]) or np.all(rank_b == rank_b[0]):
        return 0.0
    rank_a -= rank_a.mean()
    rank_b -= rank_b.mean()
    return float(np.dot(rank_a, rank_b) / math.sqrt(np.dot(rank_a, rank_a) * np.dot(rank_b, rank_b)))


def success_probability(
    utilities: np.ndarray, retrieved_idx: np.ndarray, base_rate: Any = 0.5, effect: float = 1.0
) -> np.ndarray:
    """Outcome model: ``Pr[success] = base_rate + effect * (mean utility of the retrieved set - 1/2)``.

    ``retrieved_idx`` has shape (episodes, k); ``base_rate`` is a scalar or one value per
    episode (the task type's base rate). Settings must keep the result in [0, 1].
    """
    value: FloatArray = base_rate + effect * (utilities[retrieved_idx].mean(axis=1) - 0.5)
    return value


def expected_retrieved_utility(
    utilities: np.ndarray, pool_total: float, pool_size: int, k: int
) -> np.ndarray:
    """``E[mean utility of M | m in M]`` for a uniform ``k``-subset ``M`` of a pool containing ``m``.

    ``= u_m / k + (k - 1) / k * (pool_total - u_m) / (pool_size - 1)``: ``m`` itself plus
    ``k - 1`` companions drawn uniformly from the rest of the pool.
    """
    if k == 1:
        return np.asarray(utilities, dtype=np.float64).copy()
    return utilities / k + (k - 1) / k * (pool_total - utilities) / (pool_size - 1)


def p_plus_uniform(utilities: np.ndarray, k: int, base_rate: float = 0.5, effect: float = 1.0) -> np.ndarray:
    """Exact ``p+(m) = Pr[success | m retrieved]`` under uniform retrieval of ``k`` of all memories."""
    u = np.asarray(utilities, dtype=np.float64)
    return base_rate + effect * (expected_retrieved_utility(u, u.sum(), u.size, k) - 0.5)


def p_plus_by_enumeration(
    utilities: Sequence[float], k: int, base_rate: float = 0.5, effect: float = 1.0
) -> np.ndarray:
    """``p+(m)`` by averaging the success probability over every ``k``-subset containing ``m``.

    Exponential in the number of memories: a check of :func:`p_plus_uniform` on small worlds.
    """
    u = np.asarray(utilities, dtype=np.float64)
    total, count = np.zeros(u.size), np.zeros(u.size)
    for subset in itertools.combinations(range(u.size), k):
        chosen = list(subset)
        total[chosen] += base_rate + effect * (u[chosen].mean() - 0.5)
        count[chosen] += 1
    return total / count


def uniform_retrieval(
    rng: np.random.Generator,
    n_episodes: int,
    pool_size: int,
    k: int,
    pool_limits: np.ndarray | None = None,
) -> np.ndarray:
    """``k`` distinct memories of ``0 .. pool_size - 1`` per episode, uniformly; shape (episodes, k).

    Each row is a uniformly random *ordered* sample without replacement: the ``k`` smallest of
    ``pool_size`` uniform keys, in increasing key order. Any leading columns of a row are
    therefore themselves a uniform sample (Experiment 4 relies on this). How the ``k`` smallest
    are found (:func:`smallest_in_order`, over each pool's columns alone) cannot change a row
    whose keys are distinct (doubles of ``Generator.random``: equal keys are never seen).

    ``pool_limits`` (one int per episode, each in ``[k, pool_size]``) restricts episode ``t`` to
    the memories ``0 .. pool_limits[t] - 1``: the keys of the others are drawn and ignored. Every
    episode reads exactly ``pool_size`` values of ``rng``, so row ``t`` depends only on the
    stream and ``t``, never on how many episodes are drawn per call.
    """
    limits = None if pool_limits is None else np.asarray(pool_limits, dtype=np.intp)
    if limits is not None and (
        limits.shape != (n_episodes,) or not np.all((limits >= k) & (limits <= pool_size))
    ):
        raise ValueError(f"pool_limits must be {n_episodes} ints in [{k}, {pool_size}]")
    pools, rows = () if limits is None else np.unique(limits), []
    for start in range(0, n_episodes, BLOCK_EPISODES):
        keys = rng.random((min(BLOCK_EPISODES, n_episodes - start), pool_size))
        if limits is None:
            rows.append(smallest_in_order(keys, k))
            continue
        # a row's k smallest keys in its pool are its k smallest once the others are set to
        # inf: each pool's rows are ranked over its columns alone
        part, chosen = limits[start : start + keys.shape[0]], np.empty((keys.shape[0], k), dtype=np.intp)
        for limit in pools:
            at = np.flatnonzero(part == limit)
            chosen[at] = smallest_in_order(keys[at, :limit], k)
        rows.append(chosen)
    return np.concatenate(rows) if rows else np.empty((0, k), dtype=np.intp)


def smallest_in_order(keys: FloatArray, k: int) -> IntArray:
    """Column indices of each row's ``k`` smallest keys, in increasing key order: the columns
    whose keys are ``<=`` the row's ``k``-th smallest (``np.sort``), ordered by key. Should a
    row hold two keys equal to its ``k``-th smallest, the block is ranked by ``argpartition``."""
    rows, width = keys.shape
    columns: IntArray = np.broadcast_to(np.arange(width), keys.shape)
    if k < width:
        chosen = keys <= np.sort(keys, axis=1)[:, k - 1 : k]
        tied = np.count_nonzero(chosen) != rows * k  # every row has at least k
        columns = (
            keys.argpartition(k - 1, axis=1)[:, :k]
            if tied
            else (np.flatnonzero(chosen) % width).reshape(rows, k)
        )
    order = np.take_along_axis(keys, columns, axis=1).argsort(axis=1)
    return np.take_along_axis(columns, order, axis=1)


def softmax_retrieval(
    worth: np.ndarray, gumbel: np.ndarray, temperature: float | np.ndarray, k: int
) -> np.ndarray:
    """Sample ``k`` memories without replacement with probabilities ``softmax(worth / temperature)``.

    Gumbel-top-k: the ``k`` largest of ``worth / temperature + G`` (``G`` i.i.d. standard
    Gumbel) are distributed exactly as ``k`` sequential softmax draws without replacement.
    ``worth`` and ``gumbel`` have shape (..., n_memories); returns shape (..., k).
    ``temperature`` is a scalar or one per row, shape (..., 1): each key is one division either way.
    """
    keys = worth / temperature + gumbel
    top = np.argpartition(-keys, k - 1, axis=-1)[..., :k]
    order = np.take_along_axis(-keys, top, axis=-1).argsort(axis=-1)
    return np.take_along_axis(top, order, axis=-1)


def retrieval_entropy(retrieval_counts: np.ndarray) -> np.ndarray:
    """Normalised entropy ``-sum q log q / log n`` of retrieval shares ``q`` (last axis): 1 is uniform."""
    counts = np.asarray(retrieval_counts, dtype=np.float64)
    share = counts / counts.sum(axis=-1, keepdims=True)
    terms = np.where(share > 0, share * np.log(np.where(share > 0, share, 1.0)), 0.0)
    value: FloatArray = -terms.sum(axis=-1) / math.log(counts.shape[-1])
    return value


def loglog_slope(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Least-squares slope of ``log y`` against ``log x`` (``-1/2`` for a ``1/sqrt(n)`` law).

    ``sum((u - mean u)(v - mean v)) / sum((u - mean u)^2)`` with ``u = log x``, ``v = log y``,
    summed exactly (``math.fsum``): a least-squares solver goes through BLAS, whose kernels
    differ between CPUs in the last bit.
    """
    u = [math.log(float(value)) for value in np.asarray(x, dtype=np.float64).ravel()]
    v = [math.log(float(value)) for value in np.asarray(y, dtype=np.float64).ravel()]
    mean_u, mean_v = math.fsum(u) / len(u), math.fsum(v) / len(v)
    spread = math.fsum((a - mean_u) ** 2 for a in u)
    return math.fsum((a - mean_u) * (b - mean_v) for a, b in zip(u, v, strict=True)) / spread


def separated(gaps: Sequence[float] | np.ndarray, z: float = SEPARATION_Z) -> bool:
    """Experiment 4's criterion: ``mean(gaps) - z * sd(gaps) > 0`` over seeds (sample sd).

    Treating the per-seed gaps as draws of what one run would show (normal approximation),
    ``z = 1.645`` asks that a *single* run, i.e. one deployed memory store, ranks the anchor
    above the hitchhiker with probability at least 95 % (one-sided: the question has a
    direction). A test of the mean instead, ``mean > 2 sd / sqrt(seeds)``, passes at any
    diversity > 0 given enough seeds: it measures the seed count, not Memory Worth.
    """
    values = np.asarray(gaps, dtype=np.float64)
    if values.size < 2:  # no sd to test against
        return False
    mean, sd = mean_sd(values)
    return bool(mean - z * sd > 0)


def seed_streams(seed: int, n_seeds: int) -> list[np.random.SeedSequence]:
    """Independent per-run seeds: the children of ``SeedSequence(seed)``.

    ``seed`` is an int ``>= 0`` (numpy ints too) and ``n_seeds`` an int ``>= 0``: a bool would
    silently be seed 1, a negative int is refused by numpy without naming the argument.
    """
    raise_problems([seed_problem("seed", seed), int_problem("n_seeds", n_seeds, minimum=0, allow_numpy=True)])
    return np.random.SeedSequence(int(seed)).spawn(int(n_seeds))


def substream(seed: int | np.random.SeedSequence, index: int) -> np.random.Generator:
    """A generator on child ``index`` of a run's seed: one kind of per-episode draw.

    The child is the ``SeedSequence`` that ``seed.spawn`` would give as its ``index``-th (same
    entropy, ``spawn_key + (index,)``), built directly, so it does not depend on how often
    ``seed`` was spawned from before: a run given the same ``seed`` object twice (Experiment 4's
    diversities share their seed) draws the same numbers both times. An int seed stands for
    ``SeedSequence(seed)``. The children are independent of ``default_rng(seed)`` itself.
    """
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    child = np.random.SeedSequence(
        root.entropy, spawn_key=(*root.spawn_key, int(index)), pool_size=root.pool_size
    )
    return np.random.default_rng(child)


def check_world(world: Any, rules: dict[str, tuple[str, float, float]]) -> None:
    """Check a world's settings: ``rules[name] = (kind, low, high)``, kind ``"int"`` or ``"real"``.

    One ``ValueError``, prefixed with the world's class name, lists every value that is not
    of its kind or not in ``[low, high]``.
    """
    problems = []
    for name, (kind, low, high) in rules.items():
        value = getattr(world, name)
        ok = is_int(value, allow_numpy=True) if kind == "int" else is_real(value)
        if not ok or not low <= value <= high:
            problems.append(
                f"{name} must be {'an int' if kind == 'int' else 'a real number'} in "
                f"[{low}, {high}], got {value!r}"
            )
    raise_problems(problems, prefix=f"{type(world).__name__}: ")


def check_n_seeds(n_seeds: int, minimum: int = 1) -> None:
    """``ValueError`` unless ``n_seeds`` is an int >= ``minimum``."""
    require_int("n_seeds", n_seeds, minimum=minimum, allow_numpy=True)


def check_checkpoints(checkpoints: Sequence[int], n_episodes: int) -> tuple[int, ...]:
    """``checkpoints`` as a tuple of ints; ``ValueError`` unless strictly increasing in [0, n_episodes]."""
    values = tuple(int(c) for c in checkpoints)
    if not values or list(values) != sorted(set(values)) or values[0] < 0 or values[-1] > n_episodes:
        raise ValueError(
            f"checkpoints must be strictly increasing episode counts in [0, {n_episodes}], "
            f"got {tuple(checkpoints)!r}"
        )
    return values


def replace_world(world: _World, **changes: Any) -> _World:
    """A copy of the frozen dataclass ``world`` with some fields changed (validated again)."""
    values = {f.name: getattr(world, f.name) for f in fields(world)}  # type: ignore[arg-type]
    values.update(changes)
    return type(world)(**values)


def episodes_to_checkpoints(
    seed: int | np.random.SeedSequence,
    utilities: FloatArray,
    retrieved_per_episode: int,
    checkpoints: Sequence[int],
    successes: FloatArray,
    failures: FloatArray,
) -> Iterator[tuple[int, IntArray, npt.NDArray[np.bool_]]]:
    """Run uniform-retrieval episodes up to each checkpoint in turn, adding them to the counters.

    Episode ``t`` retrieves by :func:`uniform_retrieval` from the run's retrieval stream
    (``substream(seed, RETRIEVAL_STREAM)``, ``n_memories`` keys per episode) and succeeds when
    the ``t``-th uniform of its outcome stream (``substream(seed, OUTCOME_STREAM)``) is below
    :func:`success_probability`. Between consecutive checkpoints the block of episodes is drawn
    and added to ``successes``/``failures`` in place; then ``(checkpoint, retrieved, outcomes)``
    of that block is yielded, so the caller reads the counters at exactly ``checkpoint``
    episodes. A checkpoint equal to the previous one (or 0 at the start) draws nothing and
    yields an empty block. Invariant: the counters after ``c`` episodes are the same whatever
    the other checkpoints, since each stream is read a fixed amount per episode.
    """
    for checkpoint, [(retrieved, outcomes)] in depths_to_checkpoints(
        seed, utilities, (retrieved_per_episode,), checkpoints, [(successes, failures)]
    ):
        yield checkpoint, retrieved, outcomes


def depths_to_checkpoints(
    seed: int | np.random.SeedSequence,
    utilities: FloatArray,
    depths: Sequence[int],
    checkpoints: Sequence[int],
    counters: Sequence[tuple[FloatArray, FloatArray]],
) -> Iterator[tuple[int, list[tuple[IntArray, npt.NDArray[np.bool_]]]]]:
    """:func:`episodes_to_checkpoints` at several retrieval depths at once, ``counters[i]`` the
    ``(successes, failures)`` of depth ``depths[i]``; yields ``(checkpoint, [(retrieved,
    outcomes) of each depth])``.

    Each depth's episodes are those :func:`episodes_to_checkpoints` would draw for it alone:
    every depth reads the same streams by the same amounts, a row's ``k`` smallest keys in key
    order are the leading ``k`` columns of one :func:`uniform_retrieval` at the largest depth,
    and each depth compares the same outcome uniforms with its own success probability. (Only
    two equal keys in a row, doubles of ``Generator.random``, could be ordered differently
    by the two routes.)
    """
    retrieval, outcome = substream(seed, RETRIEVAL_STREAM), substream(seed, OUTCOME_STREAM)
    widest = max(depths)
    done = 0
    for checkpoint in checkpoints:
        size = max(checkpoint - done, 0)
        shared = uniform_retrieval(retrieval, size, utilities.size, widest)
        draws = outcome.random(size)
        blocks = [(shared[:, :k], draws < success_probability(utilities, shared[:, :k])) for k in depths]
        for (successes, failures), (retrieved, outcomes) in zip(counters, blocks if size else ()):
            add_episodes(successes, failures, retrieved, outcomes)
        done = max(done, checkpoint)
        yield checkpoint, blocks
