"""Experiments 1 and 3: a controlled world with known utilities, retrieved uniformly (1) or by a
softmax over the current worth (3).

Experiment 3's feedback loop, :func:`softmax_runs`, plays several settings side by side: episode
``t`` retrieves ``k`` memories by a softmax over the current Memory Worth (Gumbel-top-``k``), and
the outcome updates the counters the next episode reads (:class:`PolicyWorld`);
:func:`preference_bound` is how strongly such a softmax favours the best-rated memory."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._validate import raise_problems, real_problem, seed_problem
from ...worth import DEFAULT_PRIOR, WORTH_CLASSES, class_counts, memory_worth
from ..executor import Executor, each_seed, map_seeds
from ..stats import DISTINGUISHABLE_Z, rho_across_seeds
from .model import (
    BLOCK_EPISODES,
    DEFAULT_N_SEEDS,
    OUTCOME_STREAM,
    RETRIEVAL_STREAM,
    FloatArray,
    check_checkpoints,
    check_n_seeds,
    check_world,
    depths_to_checkpoints,
    p_plus_uniform,
    replace_world,
    retrieval_entropy,
    seed_streams,
    smallest_in_order,
    spearman_rho,
    substream,
    success_probability,
)

__all__ = [
    "ControlledWorld",
    "ControlledResult",
    "controlled_experiment",
    "retrieval_depth_sweep",
    "DEFAULT_DEPTHS",
    "static_score_rho",
    "consistent_with_band",
    "gap_decomposition",
    "loop_cost_words",
    "PolicyWorld",
    "PolicyResult",
    "policy_experiment",
    "temperature_sweep",
    "softmax_runs",
    "preference_bound",
    "Experiment1Summary",
    "experiment1_summary",
    "temperature_rows",
    "temperature_values",
]


@dataclass(frozen=True)
class ControlledWorld:
    """Experiment 1: known utilities, uniform retrieval, stationary outcomes.

    Settings the paper gives: 100 memories, uniform retrieval, 10 000 episodes, 20 seeds.
    Settings it leaves open, and the choices here:

    * utilities ``u_m ~ Uniform(0, 1)`` (no reason to prefer another shape);
    * outcome ``Pr[success] = mean utility of the retrieved set`` (every retrieved memory
      contributes equally; ``p+`` is exact, :func:`p_plus_uniform`);
    * ``retrieved_per_episode = 10``.

    How ``k`` was chosen (reported, not hidden): ``k = 5`` was tried first and landed above
    the published rho; ``k = 10``, an equally common top-k depth, is the default, kept in
    Experiments 3 and 4. :func:`retrieval_depth_sweep` shows the whole dependence (the Experiment
    1 chapter tabulates it). Larger ``k`` shares each outcome among more memories, so each one's
    worth differs less from the others' while the noise stays put. With unlimited episodes rho
    would reach 1 for every ``k``: ``p+`` is increasing in utility.

    The exact ``p+`` lies in a band of width ``1 / k`` around 0.5, so with ``k = 10`` every
    memory ends ``mixed`` under the default thresholds: absolute thresholds assume a memory's
    worth can approach 0 or 1, which co-retrieval of ten equally weighted memories does not allow.

    Attributes
    ----------
    n_memories : int, default 100
    retrieved_per_episode : int, default 10
    n_episodes : int, default 10_000
    checkpoints : tuple of int
        Episode counts at which ``rho`` is recorded for the convergence figure.
    """

    n_memories: int = 100
    retrieved_per_episode: int = 10
    n_episodes: int = 10_000
    checkpoints: tuple[int, ...] = (0, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000)

    def __post_init__(self) -> None:
        check_world(
            self,
            {
                "n_memories": ("int", 2, 10**7),
                "n_episodes": ("int", 1, 10**8),
                "retrieved_per_episode": (
                    "int",
                    1,
                    self.n_memories - 1 if isinstance(self.n_memories, int) else 1,
                ),
            },
        )
        object.__setattr__(self, "checkpoints", check_checkpoints(self.checkpoints, self.n_episodes))


class _RhoAcrossSeeds:
    """Mean and sample sd (ddof=1) across seeds of a per-seed ``rho`` array."""

    rho: FloatArray

    @property
    def rho_mean(self) -> float:
        """Mean of ``rho`` over seeds (:func:`forgetting.studies.stats.rho_across_seeds`)."""
        return rho_across_seeds(self.rho)[0]

    @property
    def rho_sd(self) -> float:
        """Sample sd of ``rho`` over seeds; 0.0 for one seed."""
        return rho_across_seeds(self.rho)[1]

    @property
    def rho_se(self) -> float:
        """Monte Carlo standard error of :attr:`rho_mean`: ``sd / sqrt(seeds)``."""
        return self.rho_sd / math.sqrt(len(self.rho))


@dataclass(frozen=True)
class ControlledResult(_RhoAcrossSeeds):
    """Experiment 1 over seeds. ``rho[s]`` is the final Spearman rho(MW, utility) of seed ``s``."""

    world: ControlledWorld
    rho: np.ndarray  # (seeds,)
    rho_at_checkpoints: np.ndarray  # (seeds, checkpoints)
    checkpoints: np.ndarray
    taxonomy: np.ndarray  # (seeds, 4) counts in WORTH_CLASSES order, final
    utilities: np.ndarray  # (seeds, memories)
    p_plus: np.ndarray  # (seeds, memories)
    worth: np.ndarray  # (seeds, memories)
    evidence: np.ndarray  # (seeds, memories)
    baseline_rho: float = 0.0  # never-updating store: every worth is the prior -> 0.0 by definition

    @property
    def p_plus_rho(self) -> np.ndarray:
        """rho(p+, utility) per seed: the value MW tends to with unlimited episodes."""
        return np.array([spearman_rho(p, u) for p, u in zip(self.p_plus, self.utilities)])

    def taxonomy_counts(self) -> dict[str, float]:
        """Mean count per class across seeds."""
        return {name: float(v) for name, v in zip(WORTH_CLASSES, self.taxonomy.mean(axis=0))}


def _depth_runs(world: ControlledWorld, depths: Sequence[int], seed: Any) -> list[tuple[Any, ...]]:
    """One seed of ``world`` at each retrieval depth of ``depths``, every depth on the same draws
    (:func:`~forgetting.studies.worlds.model.depths_to_checkpoints`): utilities from ``default_rng(seed)``,
    episodes from its own streams, so ``checkpoints`` only chooses where ``rho`` is read."""
    rng = np.random.default_rng(seed)
    n = world.n_memories
    utilities = rng.uniform(0.0, 1.0, n)
    counters = [(np.zeros(n), np.zeros(n)) for _ in depths]
    rhos: list[list[float]] = [[] for _ in depths]  # at each checkpoint; the last block runs on unrecorded
    for _ in depths_to_checkpoints(seed, utilities, depths, (*world.checkpoints, world.n_episodes), counters):
        if len(rhos[0]) < len(world.checkpoints):
            for found, (successes, failures) in zip(rhos, counters):
                found.append(spearman_rho(memory_worth(successes, failures), utilities))
    runs = []
    for k, found, (successes, failures) in zip(depths, rhos, counters):
        worth = memory_worth(successes, failures)
        evidence = successes + failures
        runs.append(
            (
                np.array(spearman_rho(worth, utilities)),
                np.array(found),
                class_counts(worth, evidence),
                utilities,
                p_plus_uniform(utilities, k),
                worth,
                evidence,
            )
        )
    return runs


def controlled_experiment(
    world: ControlledWorld = ControlledWorld(),
    n_seeds: int = DEFAULT_N_SEEDS,
    seed: int = 0,
    executor: Executor | None = None,
) -> ControlledResult:
    """Experiment 1: :class:`ControlledWorld` for ``n_seeds`` seeds, each on its own child stream of ``seed``.

    ``executor`` (default: this process) runs chunks of seeds; the result does not depend on it.
    Nor does it depend on ``world.checkpoints``: episode ``t`` of a seed draws the same numbers
    whatever is recorded, so the final ``rho`` and ``rho`` at a checkpoint are the same with any
    other set of checkpoints (or none), and a shorter run is the start of a longer one.
    """
    k = int(world.retrieved_per_episode)
    return retrieval_depth_sweep((k,), world, n_seeds, seed, executor)[k]


#: Retrieval depths of the Experiment 1 sweep: every k from 1 to 20.
DEFAULT_DEPTHS: tuple[int, ...] = tuple(range(1, 21))


def static_score_rho(utilities: np.ndarray, seed: int = 0) -> np.ndarray:
    """rho(write-time score, utility) per seed for a store that never updates random scores.

    One reading of the paper's "never updating" baseline: each memory gets a score when it is
    written, ``Uniform(0, 1)`` and independent of its utility, and keeps it. ``utilities`` is
    ``(seeds, memories)``; seed ``s`` draws its scores from child stream ``s`` of
    ``SeedSequence([seed, 1])`` (apart from the worlds' own streams). The other reading, a
    store that keeps every memory at the prior, gives 0.0 by the definition of
    :func:`spearman_rho`. ``seed`` is an int ``>= 0``.
    """
    u = np.asarray(utilities, dtype=np.float64)
    if u.ndim != 2 or u.shape[1] < 2:
        raise ValueError(f"utilities must be (seeds, memories >= 2), got shape {u.shape}")
    raise_problems([seed_problem("seed", seed)])
    streams = np.random.SeedSequence([int(seed), 1]).spawn(u.shape[0])
    return np.array(
        [
            spearman_rho(np.random.default_rng(s).uniform(0.0, 1.0, row.size), row)
            for s, row in zip(streams, u)
        ]
    )


def consistent_with_band(mean: float, se: float, low: float, high: float, z: float = 1.96) -> bool:
    """Whether ``[mean - z se, mean + z se]`` meets the published band ``[low, high]``.

    A mean outside the band by less than its own Monte Carlo error (``z`` standard errors)
    cannot be told apart from one inside it.
    """
    return bool(mean + z * se >= low and mean - z * se <= high)


def gap_decomposition(policy_rho: np.ndarray, uniform_rho: np.ndarray, published: float) -> dict[str, float]:
    """Split the gap ``mean(policy_rho) - published`` into the loop's part and the rest, paired by seed.

    ``loop = mean(policy_rho - uniform_rho)`` (same worlds, softmax against uniform retrieval)
    and ``setting = mean(uniform_rho) - published`` (what the world's settings, above all the
    retrieval depth, give without the loop); ``loop + setting`` is the gap. Each part comes with
    its Monte Carlo standard error (``sd / sqrt(seeds)``, of the paired differences for the
    loop) and ``loop_share = loop / gap``.
    """
    policy, uniform = np.asarray(policy_rho, dtype=np.float64), np.asarray(uniform_rho, dtype=np.float64)
    if policy.shape != uniform.shape or policy.ndim != 1 or policy.size < 2:
        raise ValueError(
            f"policy_rho and uniform_rho must be 1-d, paired by seed, >= 2 seeds; got {policy.shape}, {uniform.shape}"
        )
    root = math.sqrt(policy.size)
    difference = policy - uniform
    gap = float(policy.mean()) - published
    loop = float(difference.mean())
    return {
        "gap": gap,
        "gap_se": float(policy.std(ddof=1)) / root,
        "loop": loop,
        "loop_se": float(difference.std(ddof=1)) / root,
        "setting": float(uniform.mean()) - published,
        "setting_se": float(uniform.std(ddof=1)) / root,
        "loop_share": loop / gap if gap != 0 else float("nan"),
    }


def loop_cost_words(loop: float, loop_se: float) -> str:
    """How the prose describes the loop's part of the gap: told apart from zero or not.

    ``|loop| / loop_se >= DISTINGUISHABLE_Z`` (a two-sided 95 % test on the paired differences)
    is "a cost these seeds measure", anything less "a cost these seeds cannot tell apart from
    zero". Raises ``ValueError`` unless ``loop_se`` is a positive finite number.
    """
    raise_problems([real_problem("loop", loop), real_problem("loop_se", loop_se, 0.0, low_open=True)])
    if abs(loop) / loop_se >= DISTINGUISHABLE_Z:
        return "a cost these seeds measure"
    return "a cost these seeds cannot tell apart from zero"


def retrieval_depth_sweep(
    depths: Sequence[int] = DEFAULT_DEPTHS,
    world: ControlledWorld = ControlledWorld(),
    n_seeds: int = DEFAULT_N_SEEDS,
    seed: int = 0,
    executor: Executor | None = None,
) -> dict[int, ControlledResult]:
    """Experiment 1 at several retrieval depths ``k`` (everything else from ``world``);
    :func:`controlled_experiment` is the sweep of one depth. A seed's depths run together on
    one set of draws (:func:`~forgetting.studies.worlds.model.depths_to_checkpoints`), each depth's
    episodes those it would draw alone."""
    worlds = {int(k): replace_world(world, retrieved_per_episode=int(k)) for k in depths}
    check_n_seeds(n_seeds)
    if not worlds:
        return {}
    chunk = each_seed(functools.partial(_depth_runs, world, tuple(worlds)))
    runs = map_seeds(chunk, seed_streams(seed, n_seeds), executor, label=f"{n_seeds} seeds")

    def result(i: int, alone: ControlledWorld) -> ControlledResult:
        stacked = [np.stack(parts) for parts in zip(*(run[i] for run in runs))]
        rho, rhos, taxonomy, utilities, p_plus, worth, evidence = stacked
        at = np.array(alone.checkpoints)
        return ControlledResult(alone, rho, rhos, at, taxonomy, utilities, p_plus, worth, evidence)

    return {k: result(i, alone) for i, (k, alone) in enumerate(worlds.items())}


@dataclass(frozen=True)
class PolicyWorld:
    """Experiment 3: retrieval by softmax over the current Memory Worth (a feedback loop).

    Same memories and outcome model as :class:`ControlledWorld`, but episode ``t`` retrieves
    ``k`` memories without replacement with probabilities ``softmax(MW_t / temperature)``
    (:func:`~forgetting.studies.worlds.model.softmax_retrieval`), so what is learnt decides what
    is tried next. Every memory starts at the prior 0.5, so the first episode is uniform.

    The paper does not give the temperature. Memory Worth lives in a narrow band here (about
    0.45-0.55 with ``k = 10``), so the temperature sets how strongly the loop exploits:

    a memory of worth ``w`` is drawn in proportion to ``exp(w / temperature)``, so with worth
    spread over 0.1 the best memory is drawn about ``e^(0.1 / temperature)`` times as often as
    the worst. High temperatures are practically uniform retrieval (Experiment 1); low ones
    exploit: memories that look bad early are rarely retried and their worth stays at a noisy
    early value, so the ranking of the tail degrades before coverage collapses. The default
    0.2 is the lowest temperature of :func:`temperature_sweep` whose rho still matched the
    paper's "no collapse"; the Experiment 3 chapter shows the sweep.

    Attributes
    ----------
    n_memories : int, default 100
    retrieved_per_episode : int, default 10
    n_episodes : int, default 10_000
    temperature : float, default 0.2
    """

    n_memories: int = 100
    retrieved_per_episode: int = 10
    n_episodes: int = 10_000
    temperature: float = 0.2

    def __post_init__(self) -> None:
        check_world(
            self,
            {
                "n_memories": ("int", 2, 10**6),
                "n_episodes": ("int", 1, 10**7),
                "temperature": ("real", 1e-6, 1e6),
                "retrieved_per_episode": (
                    "int",
                    1,
                    self.n_memories - 1 if isinstance(self.n_memories, int) else 1,
                ),
            },
        )


@dataclass(frozen=True)
class PolicyResult(_RhoAcrossSeeds):
    """Experiment 3 over seeds: final rho, coverage (share of memories retrieved at least once),
    normalised entropy of the retrieval counts (1 = uniform)."""

    world: PolicyWorld
    rho: np.ndarray  # (seeds,)
    coverage: np.ndarray  # (seeds,)
    entropy: np.ndarray  # (seeds,)
    utilities: np.ndarray  # (seeds, memories)
    worth: np.ndarray  # (seeds, memories)
    retrievals: np.ndarray  # (seeds, memories) retrieval counts

    @property
    def success_rate(self) -> np.ndarray:
        """Per seed, the share of episodes that succeeded: ``sum(h+) / (k * episodes)``.

        Every success adds 1 to ``h+`` of each of the ``k`` retrieved memories, and
        ``h+ = MW * retrievals`` (rounded to the nearest integer, as uniform weights are 1).
        """
        successes = np.rint(self.worth * self.retrievals).sum(axis=1)
        value: FloatArray = successes / (self.world.retrieved_per_episode * self.world.n_episodes)
        return value

    def retrieval_ratio(self, share: float = 0.1) -> np.ndarray:
        """Per seed, mean retrievals of the top ``share`` of memories by true utility divided by
        those of the bottom ``share``: how strongly the loop prefers useful memories (1 = not at all)."""
        if not 0.0 < share <= 0.5:
            raise ValueError(f"share must be in (0, 0.5], got {share!r}")
        count = max(1, int(round(share * self.utilities.shape[1])))
        order = np.argsort(self.utilities, axis=1, kind="stable")
        ranked = np.take_along_axis(self.retrievals, order, axis=1)
        value: FloatArray = ranked[:, -count:].mean(axis=1) / ranked[:, :count].mean(axis=1)
        return value


def policy_experiment(
    world: PolicyWorld = PolicyWorld(), n_seeds: int = DEFAULT_N_SEEDS, seed: int = 0
) -> PolicyResult:
    """Experiment 3: :class:`PolicyWorld` for ``n_seeds`` seeds.

    Runs all seeds side by side (one counter array of ``seeds x memories``). Seed ``s`` draws
    its utilities from ``default_rng(child_s)`` (the same as :func:`controlled_experiment`'s
    seed ``s``), its Gumbel keys from its retrieval stream (``n`` per episode) and its outcome
    uniforms from its outcome stream (one per episode; :func:`~forgetting.studies.worlds.model.substream`),
    so a seed's result does not depend on which other seeds run with it, on
    :data:`~forgetting.studies.worlds.model.BLOCK_EPISODES`, or on ``n_episodes`` beyond its own episodes.
    """
    check_n_seeds(n_seeds)
    utilities, successes, failures, _ = softmax_runs(
        world, [world.temperature], n_seeds, seed, None, BLOCK_EPISODES
    )
    return _policy_result(world, utilities, successes, failures)


def _policy_result(
    world: PolicyWorld, utilities: FloatArray, successes: FloatArray, failures: FloatArray
) -> PolicyResult:
    """A :class:`PolicyResult` from one setting's ``(seeds, memories)`` counters."""
    worth = memory_worth(successes, failures)
    retrievals = successes + failures
    rho = np.array([spearman_rho(w, u) for w, u in zip(worth, utilities)])
    return PolicyResult(
        world, rho, (retrievals > 0).mean(axis=1), retrieval_entropy(retrievals), utilities, worth, retrievals
    )


def softmax_runs(
    world: PolicyWorld,
    temperatures: Sequence[float],
    n_seeds: int,
    seed: int,
    explore: tuple[int, Sequence[float]] | None,
    block: int,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Experiment 3's loop at every temperature side by side, from one set of draws.

    Row ``j * n_seeds + s`` is ``temperatures[j]`` with seed ``s``'s utilities, Gumbel keys and
    outcome uniforms (:func:`policy_experiment`); the draws do not depend on the temperature, so
    each is made once and read by every temperature. ``explore = (stream, epsilons)``, one
    epsilon per temperature, adds one uniform per episode from that stream of each seed: row
    ``r`` explores (ranks by the keys alone, :func:`~forgetting.studies.worlds.exploration.mixed_retrieval`)
    when it is below its epsilon. Each row's float operations are
    :func:`~forgetting.studies.worlds.model.softmax_retrieval`'s,
    :func:`success_probability`'s and :class:`~forgetting.worth.UnitCounters`' for that row
    alone (``MW / temperature`` kept up to date where an episode changed it, the same
    division), so the results are bit for bit those of one setting at a time.

    Returns ``(utilities (seeds, n), successes (rows, n), failures (rows, n), explored (rows,))``,
    ``explored`` counting each row's exploring episodes. Draws are made ``block`` episodes at a
    time (the callers pass their module's ``BLOCK_EPISODES``); no result depends on it.
    """
    n, k, runs = world.n_memories, world.retrieved_per_episode, len(temperatures)
    children = seed_streams(seed, n_seeds)
    utilities = np.stack([np.random.default_rng(child).uniform(0.0, 1.0, n) for child in children])
    keys = [substream(child, RETRIEVAL_STREAM) for child in children]
    coins = [substream(child, OUTCOME_STREAM) for child in children]
    tosses = [] if explore is None else [substream(child, explore[0]) for child in children]
    rows = runs * n_seeds
    scale = np.repeat(np.asarray(temperatures, dtype=np.float64), n_seeds)[:, None]  # (rows, 1)
    thresholds = None if explore is None else np.repeat(np.asarray(explore[1], dtype=np.float64), n_seeds)
    seed_of_row = np.tile(np.arange(n_seeds), runs)
    offset = np.arange(rows)[:, None] * n  # memory m of row r is entry r * n + m of the flat arrays below
    flat_utilities = np.tile(utilities, (runs, 1)).ravel()
    successes, failures = np.zeros((rows, n)), np.zeros((rows, n))  # whole numbers from zero
    scaled = np.full((rows, n), DEFAULT_PRIOR) / scale  # MW / temperature, the prior before any episode
    won_flat, lost_flat, scaled_flat = successes.reshape(-1), failures.reshape(-1), scaled.reshape(-1)
    negated = np.empty((runs, n_seeds, n))
    explored = np.zeros(rows)
    for start in range(0, world.n_episodes, block):
        size = min(block, world.n_episodes - start)
        gumbel = np.stack([rng.gumbel(size=(size, n)) for rng in keys], axis=1)  # (block, seeds, n)
        draws = np.tile(np.stack([rng.random(size) for rng in coins], axis=1), (1, runs))  # (block, rows)
        flags = np.zeros((size, rows), dtype=np.bool_)
        if thresholds is not None:
            toss = np.tile(np.stack([rng.random(size) for rng in tosses], axis=1), (1, runs))
            flags = toss < thresholds
            explored += flags.sum(axis=0)
        for t in range(size):
            # softmax_retrieval(MW, G, temperature, k) on every row, its keys negated once
            np.add(scaled.reshape(runs, n_seeds, n), gumbel[t], out=negated)
            keyed = np.negative(negated, out=negated).reshape(rows, n)
            if flags[t].any():  # exploring rows rank by 0 / temperature + G (mixed_retrieval)
                mask = flags[t]
                keyed[mask] = -(0.0 / scale[mask] + gumbel[t][seed_of_row[mask]])
            flat = smallest_in_order(keyed, k) + offset  # the retrieved, in key order
            outcomes = draws[t] < success_probability(flat_utilities, flat)
            won_flat[flat[outcomes]] += 1.0  # ids within a row are distinct: one unit each
            lost_flat[flat[~outcomes]] += 1.0
            won = won_flat[flat]
            scaled_flat[flat] = won / (won + lost_flat[flat]) / scale
    return utilities, successes, failures, explored


def temperature_sweep(
    temperatures: Sequence[float] = (1.0, 0.5, 0.2, 0.1, 0.05, 0.02),
    world: PolicyWorld = PolicyWorld(),
    n_seeds: int = DEFAULT_N_SEEDS,
    seed: int = 0,
) -> dict[float, PolicyResult]:
    """Experiment 3 at several softmax temperatures (everything else from ``world``)."""
    worlds = {float(t): replace_world(world, temperature=float(t)) for t in temperatures}  # checked
    if not worlds:
        return {}
    check_n_seeds(n_seeds)
    utilities, successes, failures, _ = softmax_runs(world, list(worlds), n_seeds, seed, None, BLOCK_EPISODES)
    results = {}
    for j, (t, setting) in enumerate(worlds.items()):
        part = slice(j * n_seeds, (j + 1) * n_seeds)
        results[t] = _policy_result(setting, utilities, successes[part], failures[part])
    return results


def preference_bound(worth: np.ndarray, temperature: float) -> float:
    """``exp(mean_s(max_m MW - min_m MW) / temperature)``: how many times more likely the softmax
    makes the best-rated memory than the worst-rated one, at the average spread of the worth.

    ``worth`` has shape (seeds, memories). Under ``softmax(MW / temperature)`` two memories'
    retrieval probabilities differ by the factor ``exp((MW_a - MW_b) / temperature)``; this is
    that factor at the mean over seeds of each seed's widest spread. Raises ``ValueError`` for
    an empty or non-finite ``worth`` or a temperature that is not a positive finite number.
    """
    values = np.asarray(worth, dtype=np.float64)
    raise_problems(
        [
            None
            if values.ndim == 2 and values.size
            else f"worth must be a non-empty (seeds, memories) array, got shape {values.shape}",
            None if np.isfinite(values).all() else "worth must be finite",
            real_problem("temperature", temperature, 0.0, low_open=True),
        ]
    )
    spread = math.fsum((values.max(axis=1) - values.min(axis=1)).tolist()) / values.shape[0]
    return math.exp(spread / float(temperature))


def _depth_range(depths: Sequence[int]) -> str:
    return (f"{min(depths)} to {max(depths)}" if len(depths) > 1 else str(depths[0])) if depths else "none"


@dataclass(frozen=True)
class Experiment1Summary:
    """Experiment 1 against the paper: ``matched`` are the swept depths whose mean rho agrees with
    the paper's under the two-sample criterion, ``values`` the numbers the chapter quotes (glue
    keys), ``comparison`` the rows of its published-against-book table, ``depth_rows`` the rows of
    its depth sweep and ``static_rho`` the never-updating store's rho per seed (constant worth)."""

    matched: list[int]
    values: dict[str, Any]
    comparison: list[dict[str, Any]]
    depth_rows: list[dict[str, Any]]
    static_rho: list[float]


def experiment1_summary(
    result: ControlledResult, sweep: dict[int, ControlledResult], rho: Any, never_updated: Any, seed: int = 0
) -> Experiment1Summary:
    """Compare Experiment 1 (``result``, at the chapter's depth) and its depth ``sweep`` with the
    paper's ``rho`` and ``never_updated`` (:class:`~forgetting.studies.published.Published` entries).

    The paper's ``±`` is read as an sd over as many seeds as ``result`` has; two means agree when
    their difference lies within ``Z_95`` standard errors of the difference
    (:func:`~forgetting.studies.mean_difference.difference_of_means`). The lenient readings are the
    band ``rho.low`` to ``rho.high`` and that band widened by our Monte Carlo error
    (:func:`consistent_with_band`). Raises ``ValueError`` when the agreeing depths are not one
    contiguous range (the prose gives them as one) or when a constant worth does not give rho 0.
    """
    from ..mean_difference import consistent_indices, difference_of_means, standard_error
    from ..stats import Z_95

    n_seeds, n_memories = len(result.rho), result.world.n_memories
    paper_se = standard_error(rho.spread, n_seeds)  # the paper's spread read as an sd over its seeds
    headline = difference_of_means(result.rho_mean, result.rho_se, rho.value, paper_se)
    depths = list(sweep)
    matched = [
        depths[i]
        for i in consistent_indices(
            [r.rho_mean for r in sweep.values()], [r.rho_se for r in sweep.values()], rho.value, paper_se
        )
    ]
    static = [spearman_rho(np.full(n_memories, DEFAULT_PRIOR), u) for u in result.utilities]
    static_random = static_score_rho(result.utilities, seed)
    contiguous = matched == list(range(min(matched), max(matched) + 1)) if matched else True
    if not contiguous:
        raise ValueError(f"the depths that agree with the paper, {matched}, are not one range")
    if not all(value == 0.0 for value in static):
        raise ValueError("a constant worth must give rho = 0.0 by definition")
    values: dict[str, Any] = {
        "rho_mean": result.rho_mean,
        "rho_sd": result.rho_sd,
        "rho_se": result.rho_se,
        "paper_rho": rho.value,
        "paper_rho_spread": rho.spread,
        "paper_rho_low": rho.low,
        "paper_rho_high": rho.high,
        "paper_rho_static": never_updated.value,
        "rho_static_random_mean": float(static_random.mean()),
        "rho_static_random_sd": float(static_random.std(ddof=1)),
        "rho_min": result.rho.min(),
        "rho_max": result.rho.max(),
        "rho_static": float(np.mean(static)),
        "rho_limit": result.p_plus_rho.mean(),
        "rho_gap": result.rho_mean - rho.value,
        "criterion_z": Z_95,
        "paper_rho_se": paper_se,
        "rho_diff": headline.difference,
        "rho_diff_se": headline.se,
        "rho_diff_z": abs(headline.z),
        "strict_verdict": "agrees" if headline.consistent else "does not agree",
        "k_smallest": min(sweep),
        "k_largest": max(sweep),
        "n_depths": len(sweep),
        "n_matched": len(matched),
        "k_match": _depth_range(matched),
        "matched_contiguous": contiguous,
        "gap_in_se": abs(result.rho_mean - rho.value) / result.rho_se,
        "band_verdict": "inside" if rho.low <= result.rho_mean <= rho.high else "outside",
        "mc_verdict": "consistent with the band within its Monte Carlo error"
        if consistent_with_band(result.rho_mean, result.rho_se, rho.low, rho.high)
        else "outside the band by more than its Monte Carlo error",
    }
    comparison = [
        {
            "quantity": "Spearman rho(MW, utility), mean over seeds",
            "published": rho.value,
            "this book": result.rho_mean,
        },
        {"quantity": "Spearman rho, sd over seeds", "published": rho.spread, "this book": result.rho_sd},
        {
            "quantity": "Spearman rho, standard error of the mean",
            "published": None,
            "this book": result.rho_se,
        },
        {
            "quantity": "never-updating baseline rho (worth stays at the prior)",
            "published": never_updated.value,
            "this book": float(np.mean(static)),
        },
        {
            "quantity": "never-updating baseline rho (random write-time scores), mean",
            "published": never_updated.value,
            "this book": float(static_random.mean()),
        },
        {"quantity": "same, sd over seeds", "published": None, "this book": float(static_random.std(ddof=1))},
    ]
    rows: list[dict[str, Any]] = []
    for k, r in sweep.items():
        difference = difference_of_means(r.rho_mean, r.rho_se, rho.value, paper_se)
        rows.append(
            {
                "k": k,
                "rho_mean": r.rho_mean,
                "rho_sd": r.rho_sd,
                "rho_se": r.rho_se,
                "consistent_with_paper": consistent_with_band(r.rho_mean, r.rho_se, rho.low, rho.high),
                "difference_from_paper": difference.difference,
                "difference_se": difference.se,
                "agrees_with_paper_mean": k in matched,
                "p_plus_min": r.p_plus.min(),
                "p_plus_max": r.p_plus.max(),
                **{c: r.taxonomy_counts()[c] for c in WORTH_CLASSES},
            }
        )
    chosen = result.world.retrieved_per_episode
    crossing = [
        (a["k"], b["k"]) for a, b in zip(rows, rows[1:]) if a["rho_mean"] >= rho.value > b["rho_mean"]
    ]
    inside = [r["k"] for r in rows if rho.low <= r["rho_mean"] <= rho.high]
    consistent = [r["k"] for r in rows if r["consistent_with_paper"]]
    values.update(
        {
            "rho_k5": sweep[5].rho_mean if 5 in sweep else float("nan"),
            "rho_k_smallest": rows[0]["rho_mean"],
            "rho_k_largest": rows[-1]["rho_mean"],
            "k_bracket": f"{crossing[0][0]} and {crossing[0][1]}" if crossing else "none of the tested pairs",
            "k_inside": f"{min(inside)} to {max(inside)}" if inside else "none",
            "k_in_match": "inside" if chosen in matched else "outside",
            "k_consistent": f"{min(consistent)} to {max(consistent)}" if consistent else "none",
        }
    )
    return Experiment1Summary(matched, values, comparison, rows, static)


def temperature_rows(sweep: dict[float, PolicyResult]) -> list[dict[str, Any]]:
    """One row per temperature of a :func:`temperature_sweep`: rho's mean and sd, coverage (mean
    and worst seed), entropy, how much more often the top tenth of memories by utility is
    retrieved than the bottom tenth, and the success rate (means over seeds)."""
    return [
        {
            "temperature": t,
            "rho_mean": r.rho_mean,
            "rho_sd": r.rho_sd,
            "coverage_mean": r.coverage.mean(),
            "coverage_min": r.coverage.min(),
            "entropy": r.entropy.mean(),
            "top_bottom_retrieval_ratio": r.retrieval_ratio(0.1).mean(),
            "success_rate": r.success_rate.mean(),
        }
        for t, r in sweep.items()
    ]


def temperature_values(rows: Sequence[dict[str, Any]], uniform_utilities: np.ndarray) -> dict[str, Any]:
    """What the Experiment 3 chapter quotes from :func:`temperature_rows`: the coldest loop's rho,
    coverage, entropy, retrieval ratio and success rate, what uniform retrieval earns on average
    (the mean utility), and the lowest temperature at which every memory of every seed is still
    retrieved, with its rho and entropy (``nan`` when no temperature covers every memory)."""
    coldest = min(rows, key=lambda r: r["temperature"])
    full = [r for r in rows if r["coverage_min"] == 1.0]
    lowest = min(full, key=lambda r: r["temperature"]) if full else None
    return {
        "t_coldest": coldest["temperature"],
        "rho_coldest": coldest["rho_mean"],
        "coverage_coldest": coldest["coverage_mean"],
        "coverage_min_coldest": coldest["coverage_min"],
        "entropy_coldest": coldest["entropy"],
        "ratio_coldest": coldest["top_bottom_retrieval_ratio"],
        "success_coldest": coldest["success_rate"],
        "success_uniform": uniform_utilities.mean(),
        "t_full_coverage": lowest["temperature"] if lowest else float("nan"),
        "rho_full_coverage": lowest["rho_mean"] if lowest else float("nan"),
        "entropy_full_coverage": lowest["entropy"] if lowest else float("nan"),
    }
