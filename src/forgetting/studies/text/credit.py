"""Causal credit on Experiment 5's real text: randomized omission and regression next to Memory Worth.

Experiment 5's episodes (:func:`~forgetting.studies.text.exp5.run_episodes`) are run again with one
change: with probability ``epsilon`` an episode withholds one of the ``k`` memories it retrieved,
chosen uniformly (:func:`~forgetting.studies.worlds.credit.omission_slots`, streams independent of the
episode draws), and its outcome is drawn from the success probability of the set without it
(:func:`withheld_probabilities`: the outcome model of the chapter on the memories left, in rank
order; the slot stays empty). At ``epsilon = 0`` a run is Experiment 5's own, draw for draw.

Retrieval is deterministic per query, so each memory's **exact effect** in a phase follows from
the world without sampling (:func:`exact_effects`):
``tau(m) = sum_q Pr[q] 1[m in top(q)] (p_q - p_q^{-m}) / sum_q Pr[q] 1[m in top(q)]``, the mean
drop of the success probability when ``m`` is withheld from the episodes that retrieve it. The
estimators are ranked against it by Spearman's rho (:func:`~forgetting.studies.worlds.credit.ranked_rho`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._validate import int_problem, raise_problems, real_problem, shown
from ...worth.causal import omission_effects, regression_credit
from ..worlds.credit import omission_slots, present_ids, present_mask, ranked_rho, worth_of_present
from .corpus import AFTER, BEFORE, PHASES, Corpus
from .exp5 import RealTextRun, RealTextWorld, query_probabilities, run_episodes
from .outcome import OutcomeModel
from .retrieval import CorpusEmbeddings, Retrieval, set_outcome

__all__ = [
    "TEXT_ESTIMATORS",
    "withheld_probabilities",
    "exact_effects",
    "omission_run",
    "always_beside",
    "TextCredit",
    "text_credit",
    "text_credit_rows",
    "TextFindings",
    "text_findings",
    "text_claims",
]

FloatArray = npt.NDArray[np.float64]

TEXT_ESTIMATORS = {
    "worth_cumulative": "Memory Worth, whole run",
    "worth_phase": "Memory Worth, this phase",
    "omission": "omission effect",
    "regression": "regression credit",
    "regression_typed": "regression credit with task types",
}
"""The estimators compared, by key: Memory Worth as the paper runs it (counters over the whole run
so far), and four that read only the phase's episodes (given where the shift is)."""


def withheld_probabilities(corpus: Corpus, retrieval: Retrieval, outcome: OutcomeModel) -> FloatArray:
    """``(n_queries, k)``: the success probability of each query in ``retrieval.phase`` with its
    ``j``-th retrieved memory withheld (the outcome model on the other ``k - 1``, in rank order)."""
    top = retrieval.top
    table = np.empty(top.shape)
    for query in range(top.shape[0]):
        for slot in range(top.shape[1]):
            rest = [int(m) for j, m in enumerate(top[query]) if j != slot]
            fraction, misled = set_outcome(corpus, retrieval.phase, query, rest, outcome)
            table[query, slot] = outcome.probability(fraction, misled)
    return table


def exact_effects(
    corpus: Corpus, retrieval: Retrieval, withheld: FloatArray, type_weights: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Exact effect ``tau(m)`` of every memory in one phase (NaN if never retrieved) and
    ``Pr[m retrieved]`` per episode; sums are correctly rounded (:func:`math.fsum`), so the
    values are the same bits on every machine."""
    prob = query_probabilities(corpus, type_weights)
    n = len(corpus.memories)
    mass: list[list[float]] = [[] for _ in range(n)]
    gain: list[list[float]] = [[] for _ in range(n)]
    for query in range(retrieval.top.shape[0]):
        for slot, memory in enumerate(retrieval.top[query]):
            mass[memory].append(float(prob[query]))
            gain[memory].append(float(prob[query] * (retrieval.p_success[query] - withheld[query, slot])))
    rate = np.array([math.fsum(m) for m in mass])
    effect = np.array([math.fsum(g) / r if r > 0 else math.nan for g, r in zip(gain, rate)])
    return effect, rate


def always_beside(corpus: Corpus, retrieval: Retrieval, type_weights: FloatArray, memory: int) -> list[int]:
    """The memories (other than ``memory``) that some query of positive probability retrieves in
    this phase and that no such query retrieves without ``memory``: in that phase their Memory
    Worth is the success rate of episodes that all contain ``memory``."""
    live = retrieval.top[query_probabilities(corpus, type_weights) > 0]
    beside = live[(live == memory).any(axis=1)]
    alone = live[~(live == memory).any(axis=1)]
    return sorted(set(int(m) for m in beside.ravel()) - set(int(m) for m in alone.ravel()) - {memory})


@dataclass(frozen=True)
class _OmissionRun:
    run: RealTextRun  # Experiment 5's own run of the same seed (what would have been retrieved)
    slots: npt.NDArray[np.intp]
    p_success: FloatArray  # with the withheld memory absent
    success: npt.NDArray[np.bool_]


def omission_run(
    corpus: Corpus,
    vectors: CorpusEmbeddings,
    world: RealTextWorld,
    epsilon: float,
    withheld: dict[str, FloatArray] | None = None,
) -> _OmissionRun:
    """Experiment 5's run of ``world`` with randomized omission at rate ``epsilon``: the same
    draws (the outcome uniform of every episode is Experiment 5's), the withheld slot from
    :func:`~forgetting.studies.worlds.credit.omission_slots` on ``world.seed``. ``withheld``: the
    :func:`withheld_probabilities` of both phases, if already computed."""
    raise_problems([real_problem("epsilon", epsilon, 0.0, 1.0)])
    run = run_episodes(corpus, vectors, world)
    table = withheld or {p: withheld_probabilities(corpus, run.retrieval[p], world.outcome) for p in PHASES}
    return _omit(run, epsilon, table, _outcome_draws(run))


def _outcome_draws(run: RealTextRun) -> FloatArray:
    """The outcome uniform of every episode, as :func:`~forgetting.studies.text.exp5.run_episodes` drew it."""
    draws: FloatArray = np.random.default_rng(run.world.seed).random((run.n_episodes, 3))[:, 2]
    return draws


def _omit(run: RealTextRun, epsilon: float, table: dict[str, FloatArray], draws: FloatArray) -> _OmissionRun:
    """``run`` with randomized omission at ``epsilon`` (see :func:`omission_run`)."""
    e, k = run.n_episodes, run.world.k
    slots = omission_slots(run.world.seed, e, k, epsilon)
    without = np.where(run.after[:, None], table[AFTER][run.query], table[BEFORE][run.query])
    p = np.where(slots >= 0, without[np.arange(e), np.maximum(slots, 0)], run.p_success)
    return _OmissionRun(run, slots, p, draws < p)


def _estimates(o: _OmissionRun, phase: str, n_types: int) -> dict[str, FloatArray]:
    run, k = o.run, o.run.world.k
    n = len(run.corpus.memories)
    present = present_mask(o.slots, k)
    rows = run.after if phase == AFTER else ~run.after
    end = run.n_episodes if phase == AFTER else run.world.shift_episode
    retrieved, kept, ok = run.retrieved[rows], present[rows], o.success[rows]
    shown_ids = present_ids(retrieved, kept, n)
    return {
        "worth_cumulative": worth_of_present(run.retrieved[:end], present[:end], o.success[:end], n),
        "worth_phase": worth_of_present(retrieved, kept, ok, n),
        "omission": omission_effects(retrieved, o.slots[rows], ok, n).effect,
        "regression": regression_credit(shown_ids, ok, n + 1).beta[:n],
        "regression_typed": regression_credit(
            shown_ids, ok, n + 1, groups=run.task_type[rows], n_groups=n_types
        ).beta[:n],
    }


@dataclass(frozen=True)
class TextCredit:
    """Every estimator against the exact effects, per seed, phase and omission rate.

    ``rho[name][s, i, j]``: Spearman rho of estimator ``name`` with the exact effect in phase
    ``phases[i]`` at ``epsilons[j]``, over the memories retrieved in that phase (NaN where the
    estimator scored none); ``stale_lowest[name]`` whether it ranks the stale memory below every
    other memory retrieved after the shift (``False`` where it gives the stale memory no value);
    ``stale_value[name]`` its value for the stale memory after the shift; ``unscored[name]``
    the memories retrieved in the phase it gives no value; ``success_lost`` the mean drop of the
    success probability per episode against ``epsilon = 0``.
    """

    world: RealTextWorld
    epsilons: FloatArray
    phases: tuple[str, ...]
    effects: dict[str, FloatArray]  # phase -> exact effect per memory
    rates: dict[str, FloatArray]  # phase -> Pr[m retrieved] per episode
    rho: dict[str, FloatArray]  # (seeds, phases, epsilons)
    stale_lowest: dict[str, npt.NDArray[np.bool_]]  # (seeds, epsilons)
    stale_value: dict[str, FloatArray]  # (seeds, epsilons)
    unscored: dict[str, FloatArray]  # (seeds, phases, epsilons)
    success_lost: FloatArray  # (seeds, epsilons)


def text_credit(
    corpus: Corpus, vectors: CorpusEmbeddings, world: RealTextWorld, epsilons: Any, n_seeds: int
) -> TextCredit:
    """Experiment 5's ``world`` with seeds ``0 .. n_seeds - 1`` (as the chapter's spread over
    seeds) at every omission rate in ``epsilons``, on common random numbers: a seed's episodes,
    retrievals and outcome uniforms are the same at every rate. Raises ``ValueError`` (before any
    run) for an ``n_seeds`` that is not an int >= 2, or an empty ``epsilons`` or one outside [0, 1]."""
    rates_given = list(epsilons) if isinstance(epsilons, (list, tuple)) else None
    problems = [int_problem("n_seeds", n_seeds, 2)]
    if not rates_given:
        problems.append(f"epsilons must be a non-empty list of rates in [0, 1], got {shown(epsilons)}")
    else:
        problems += [real_problem(f"epsilons[{i}]", e, 0.0, 1.0) for i, e in enumerate(rates_given)]
    raise_problems(problems)
    assert rates_given is not None
    first = run_episodes(corpus, vectors, world)
    stale = int(np.flatnonzero(corpus.roles == "stale")[0])
    table = {p: withheld_probabilities(corpus, first.retrieval[p], world.outcome) for p in PHASES}
    exact = {p: exact_effects(corpus, first.retrieval[p], table[p], first.type_weights[p]) for p in PHASES}
    effects, rates = {p: exact[p][0] for p in PHASES}, {p: exact[p][1] for p in PHASES}
    shape = (n_seeds, len(PHASES), len(rates_given))
    rho = {name: np.full(shape, np.nan) for name in TEXT_ESTIMATORS}
    unscored = {name: np.zeros(shape) for name in TEXT_ESTIMATORS}
    lowest = {name: np.zeros(shape[::2], dtype=bool) for name in TEXT_ESTIMATORS}
    value = {name: np.full(shape[::2], np.nan) for name in TEXT_ESTIMATORS}
    lost = np.zeros(shape[::2])
    others = np.setdiff1d(np.flatnonzero(~np.isnan(effects[AFTER])), [stale])
    for s in range(n_seeds):
        run = run_episodes(corpus, vectors, replace(world, seed=s))  # once per seed: the same at every rate
        draws = _outcome_draws(run)
        for j, epsilon in enumerate(rates_given):
            o = _omit(run, float(epsilon), table, draws)
            lost[s, j] = float(np.mean(o.run.p_success - o.p_success))
            for i, phase in enumerate(PHASES):
                seen = ~np.isnan(effects[phase])
                for name, estimate in _estimates(o, phase, len(corpus.types)).items():
                    rho[name][s, i, j] = ranked_rho(estimate[seen], effects[phase][seen])
                    unscored[name][s, i, j] = float(np.isnan(estimate[seen]).sum())
                    if phase == AFTER:
                        value[name][s, j] = estimate[stale]
                        lowest[name][s, j] = bool(
                            not np.isnan(estimate[stale])
                            and np.all(np.nan_to_num(estimate[others], nan=np.inf) > estimate[stale])
                        )
    return TextCredit(
        world, np.array(rates_given, float), PHASES, effects, rates, rho, lowest, value, unscored, lost
    )


def text_credit_rows(result: TextCredit) -> list[dict[str, Any]]:
    """One row per (phase, omission rate, estimator): rho with the exact effect (mean and sd over
    the seeds that scored a memory), the memories left unscored, and after the shift the share of
    seeds that rank the stale memory lowest and its mean value; and the success lost per episode."""
    rows: list[dict[str, Any]] = []
    for i, phase in enumerate(result.phases):
        for j, epsilon in enumerate(result.epsilons):
            for name, label in TEXT_ESTIMATORS.items():
                if name == "worth_cumulative" and phase == BEFORE:
                    continue  # before the shift the whole run so far is the phase: the same row
                values = result.rho[name][:, i, j]
                scored = values[~np.isnan(values)]
                after = phase == AFTER
                rows.append(
                    {
                        "phase": phase,
                        "epsilon": float(epsilon),
                        "estimator": label,
                        "rho_mean": float(scored.mean()) if scored.size else math.nan,
                        "rho_sd": float(scored.std(ddof=1)) if scored.size > 1 else math.nan,
                        "seeds_scored": int(scored.size),
                        "unscored_mean": float(result.unscored[name][:, i, j].mean()),
                        "stale_lowest_share": float(result.stale_lowest[name][:, j].mean())
                        if after
                        else math.nan,
                        "stale_value_mean": float(np.nanmean(result.stale_value[name][:, j]))
                        if after and not np.isnan(result.stale_value[name][:, j]).all()
                        else math.nan,
                        "success_lost": float(result.success_lost[:, j].mean()),
                    }
                )
    return rows


@dataclass(frozen=True)
class TextFindings:
    """What beyond-credit states about Experiment 5's real text, read off one :func:`text_credit`
    run: ``values`` by glue key, and what the chapter's sentences that are not numbers are
    checked on (:func:`text_claims`).

    ``cell`` maps ``(phase, epsilon, estimator label)`` to its row of :func:`text_credit_rows`;
    ``stale`` is the stale memory's index, ``hitchhikers`` the hitchhikers retrieved after the
    shift, ``beside`` the memories retrieved only beside the stale one after it
    (:func:`always_beside`), ``chance_sd`` the sd of rho between unrelated rankings of the
    memories retrieved after the shift, ``1 / sqrt(n - 1)``.
    """

    result: TextCredit
    cell: dict[tuple[str, float, str], dict[str, Any]]
    stale: int
    hitchhikers: npt.NDArray[np.bool_]
    beside: list[int]
    chance_sd: float
    values: dict[str, Any]

    def rho(self, phase: str, epsilon: float, name: str) -> float:
        """Mean rho over seeds of estimator ``name`` (a key of :data:`TEXT_ESTIMATORS`)."""
        return float(self.cell[phase, epsilon, TEXT_ESTIMATORS[name]]["rho_mean"])

    def row(self, epsilon: float, name: str) -> dict[str, Any]:
        """The row after the shift of estimator ``name`` at ``epsilon``."""
        return self.cell[AFTER, epsilon, TEXT_ESTIMATORS[name]]


def text_findings(
    corpus: Corpus, vectors: CorpusEmbeddings, world: RealTextWorld, result: TextCredit
) -> TextFindings:
    """The numbers beyond-credit states about ``result``, a :func:`text_credit` run of ``world``.

    The rates it names are the first three of ``result.epsilons``: no omission (which must be
    ``0``: ``ValueError`` otherwise, and with fewer than two rates), the first rate above zero
    (``*_first``), the second (``text_second_rate``, NaN when there is none) and the last
    (``*_last``). ``text_omission_above_from`` is the smallest rate from which on the omission
    effect's mean rho after the shift is above both versions of Memory Worth at every larger
    rate (NaN if none; a rate where it has no value counts as below).
    """
    epsilons = [float(e) for e in result.epsilons]
    if len(epsilons) < 2 or epsilons[0] != 0.0:
        raise ValueError(f"epsilons must start at 0 and hold a rate above it, got {shown(epsilons)}")
    cell = {(r["phase"], r["epsilon"], r["estimator"]): r for r in text_credit_rows(result)}
    stale = corpus.index("stale-heroku")
    after_effects = result.effects[AFTER]
    seen_after = ~np.isnan(after_effects)
    hitchhikers = (corpus.roles == "hitchhiker") & seen_after
    run = run_episodes(corpus, vectors, world)
    beside = always_beside(corpus, run.retrieval[AFTER], run.type_weights[AFTER], stale)
    chance_sd = float(1 / np.sqrt(int(seen_after.sum()) - 1))
    first, last = epsilons[1], epsilons[-1]

    def rho(phase: str, epsilon: float, name: str) -> float:
        return float(cell[phase, epsilon, TEXT_ESTIMATORS[name]]["rho_mean"])

    def after(epsilon: float, name: str, column: str) -> float:
        return float(cell[AFTER, epsilon, TEXT_ESTIMATORS[name]][column])

    values: dict[str, Any] = {
        "text_seeds": int(result.success_lost.shape[0]),
        "text_memories": len(corpus.memories),
        "text_seen_after": int(seen_after.sum()),
        "text_seen_before": int((~np.isnan(result.effects[BEFORE])).sum()),
        "text_episodes": world.n_episodes,
        "text_shift": world.shift_episode,
        "text_k": world.k,
        "text_first_rate": first,
        "text_second_rate": epsilons[2] if len(epsilons) > 2 else math.nan,
        "text_last_rate": last,
        "stale_effect_after": float(after_effects[stale]),
        "stale_effect_before": float(result.effects[BEFORE][stale]),
        "text_hitchhikers": int(hitchhikers.sum()),
        "beside_names": ", ".join(f"`{corpus.memory_ids[m]}`" for m in beside),
    }
    for phase in (BEFORE, AFTER):
        for name in ("worth_phase", "omission", "regression", "regression_typed"):
            values[f"text_{phase}_{name}_first"] = rho(phase, first, name)
            values[f"text_{phase}_{name}_last"] = rho(phase, last, name)
        values[f"text_{phase}_worth_none"] = rho(phase, 0.0, "worth_phase")
        values[f"text_{phase}_regression_none"] = rho(phase, 0.0, "regression")
    values["text_after_cumulative_none"] = rho(AFTER, 0.0, "worth_cumulative")
    values["text_after_cumulative_last"] = rho(AFTER, last, "worth_cumulative")
    values["text_regression_unscored_none"] = after(0.0, "regression", "unscored_mean")
    values["text_typed_unscored_none"] = after(0.0, "regression_typed", "unscored_mean")
    worth_best = np.array(
        [max(rho(AFTER, e, "worth_phase"), rho(AFTER, e, "worth_cumulative")) for e in epsilons]
    )
    omission_after = np.array([rho(AFTER, e, "omission") for e in epsilons])
    above = np.nan_to_num(omission_after, nan=-2.0) > worth_best
    from_on = [e for j, e in enumerate(epsilons) if above[j:].all()]
    values["text_omission_above_from"] = from_on[0] if from_on else math.nan
    values["stale_lowest_cumulative_none"] = after(0.0, "worth_cumulative", "stale_lowest_share")
    values["stale_lowest_phase_none"] = after(0.0, "worth_phase", "stale_lowest_share")
    values["stale_lowest_cumulative_last"] = after(last, "worth_cumulative", "stale_lowest_share")
    values["stale_omission_first"] = after(first, "omission", "stale_lowest_share")
    values["stale_omission_value_last"] = after(last, "omission", "stale_value_mean")
    values["stale_cumulative_value_none"] = after(0.0, "worth_cumulative", "stale_value_mean")
    values["stale_phase_value_none"] = after(0.0, "worth_phase", "stale_value_mean")
    values["text_lost_first"] = float(result.success_lost[:, 1].mean())
    values["text_lost_last"] = float(result.success_lost[:, -1].mean())
    values["text_chance_sd"] = chance_sd
    return TextFindings(result, cell, stale, hitchhikers, beside, chance_sd, values)


def text_claims(f: TextFindings) -> dict[str, bool]:
    """beyond-credit's sentences on the real text that are not numbers, each with whether it
    holds for ``f`` (the chapter asserts every one at its published parameters)."""
    r = f.result
    epsilons = [float(e) for e in r.epsilons]
    first, last = epsilons[1], epsilons[-1]
    later = [e for e in epsilons if e >= first]
    above_first = [e for e in later if e > first]
    after_effects = r.effects[AFTER]
    phases = (BEFORE, AFTER)
    claims = {
        "the omission effect has no value without omission": bool(np.isnan(r.rho["omission"][:, :, 0]).all()),
        "without omission the regression scores some memory after the shift": f.row(0.0, "regression")[
            "unscored_mean"
        ]
        > 0,
        "without omission the regression's rho is within twice chance's spread of zero": all(
            abs(f.rho(p, 0.0, "regression")) < 2 * f.chance_sd for p in phases
        ),
        "the stale memory helps before the shift and harms after it": bool(
            after_effects[f.stale] < 0 < r.effects[BEFORE][f.stale]
        ),
        "the hitchhikers retrieved after the shift have an effect of exactly zero": bool(
            f.hitchhikers.any() and np.all(after_effects[f.hitchhikers] == 0.0)
        ),
        "some memory is retrieved only beside the stale one; Memory Worth over the whole run never ranks "
        "it lowest, over the phase sometimes": bool(f.beside)
        and f.row(0.0, "worth_cumulative")["stale_lowest_share"] == 0.0
        and 0.0 < f.row(0.0, "worth_phase")["stale_lowest_share"] < 1.0,
        "above the first rate every estimator but Memory Worth over the whole run ranks the stale memory "
        "lowest in every seed": all(
            f.row(e, n)["stale_lowest_share"] == 1.0
            for e in above_first
            for n in ("omission", "regression", "regression_typed", "worth_phase")
        ),
        "the omission effect's rho grows with every rate, at both phases": all(
            np.diff([f.rho(p, e, "omission") for e in later]).min() > 0 for p in phases
        ),
        "with task types the regression ranks lower after the shift at every rate": all(
            f.rho(AFTER, e, "regression_typed") < f.rho(AFTER, e, "regression") for e in later
        ),
        "the regression's rho after the shift grows with every rate": bool(
            np.diff([f.rho(AFTER, e, "regression") for e in later]).min() > 0
        ),
        "above the first rate the regression scores every memory retrieved after the shift": all(
            f.row(e, n)["unscored_mean"] == 0 for e in above_first for n in ("regression", "regression_typed")
        ),
        "without omission Memory Worth over the phase ranks better than the regression": all(
            f.rho(p, 0.0, "worth_phase") > f.rho(p, 0.0, "regression") for p in phases
        ),
        "before the shift the omission effect ranks above Memory Worth and the regression above the first "
        "rate": all(
            f.rho(BEFORE, e, "omission")
            > max(f.rho(BEFORE, e, "worth_phase"), f.rho(BEFORE, e, "regression"))
            for e in above_first
        ),
        "omission's price grows with its rate": bool((np.diff(r.success_lost.mean(axis=0)) > 0).all()),
        "the omission effect's mean estimate of the stale memory is within 0.05 of the exact one": abs(
            f.row(last, "omission")["stale_value_mean"] - after_effects[f.stale]
        )
        < 0.05,
        "with omission, Memory Worth over the whole run ranks the stale memory lowest more often": f.row(
            last, "worth_cumulative"
        )["stale_lowest_share"]
        > f.row(0.0, "worth_cumulative")["stale_lowest_share"],
    }
    return {claim: bool(holds) for claim, holds in claims.items()}
