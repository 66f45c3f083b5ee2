"""Experiment 3's feedback loop, several settings side by side: episode ``t`` retrieves ``k``
memories by a softmax over the current Memory Worth (Gumbel-top-``k``), and the outcome updates
the counters the next episode reads (:class:`~forgetting.worlds.controlled.PolicyWorld`); and
:func:`preference_bound`, how strongly such a softmax favours the best-rated memory."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .._validate import raise_problems, real_problem
from ..worth import DEFAULT_PRIOR
from .model import (
    OUTCOME_STREAM,
    RETRIEVAL_STREAM,
    FloatArray,
    seed_streams,
    smallest_in_order,
    substream,
    success_probability,
)

if TYPE_CHECKING:
    from .controlled import PolicyWorld

__all__ = ["softmax_runs", "preference_bound"]


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
    outcome uniforms (:func:`~forgetting.worlds.controlled.policy_experiment`); the draws do not
    depend on the temperature, so each is made once and read by every temperature. ``explore = (stream, epsilons)``, one
    epsilon per temperature, adds one uniform per episode from that stream of each seed: row
    ``r`` explores (ranks by the keys alone, :func:`~forgetting.worlds.exploration.mixed_retrieval`)
    when it is below its epsilon. Each row's float operations are
    :func:`~forgetting.worlds.model.softmax_retrieval`'s,
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
