"""The real-conversation chapter's question sections: Memory Worth held out, and credit by withholding.

Both read each conversation's questions of categories 1-4 as retrieval episodes
(:mod:`.question_retrieval`) on the same seeded train/test splits (:mod:`.question_worth`);
:func:`credit_results` adds each turn's exact effect and randomized omission
(:mod:`.question_credit`). Values and rows are plain numbers, so a page built without the
data can show the published ones instead.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .benchmark import ADVERSARIAL, question_index
from .prepared import Prepared
from .question_credit import question_credit, turn_effects
from .question_retrieval import DEFAULT_CO_SHARE, DEFAULT_MIN_RETRIEVALS, QuestionSet
from .question_worth import flag_report, held_out

__all__ = ["TABLES", "question_sets", "question_results", "worth_results", "credit_results"]

Values = dict[str, Any]
Tables = dict[str, list[dict[str, Any]]]

#: The tables of this module's sections, as :data:`.study.TABLES` names them.
TABLES = ("worth-splits", "worth-sweep", "credit")
#: Columns of a :meth:`~.question_credit.CreditRow.summary` the prose reads, and their glue suffix.
_SUFFIXES = {
    "mean_difference": "difference", "low": "low", "high": "high", "share_better": "better",
    "flagged (mean)": "flagged", "scored (mean)": "scored", "flagged crowding": "crowding",
    "flagged helping": "helping", "train hits lost": "lost", "train hits gained": "gained",
}  # fmt: skip


def question_sets(prepared: Prepared, least: int = 1) -> list[QuestionSet]:
    """Each conversation's scored questions of categories 1-4 as a :class:`~.question_retrieval.QuestionSet`,
    for every conversation with at least ``least`` of them (each of LoCoMo's has hundreds)."""
    sets = []
    for conversation, vectors in zip(prepared.conversations, prepared.vectors):
        index = question_index(conversation)
        main = index.category != ADVERSARIAL
        if int(main.sum()) < least:
            continue
        sets.append(
            QuestionSet(
                conversation.name,
                vectors.question_cosines[index.rows[main]],
                tuple(frozenset(int(i) for i in ev) for ev, keep in zip(index.evidence, main) if keep),
            )
        )
    return sets


def question_results(prepared: Prepared, params: Mapping[str, Any]) -> tuple[Values, Tables]:
    """The chapter's question sections: :func:`worth_results` and :func:`credit_results`."""
    sets = question_sets(prepared, least=2)  # a split needs a question to learn on and one to hold out
    values, tables = worth_results(sets, params)
    credit_values, credit_tables = credit_results(sets, params)
    return {**values, **credit_values}, {**tables, **credit_tables}


def worth_results(sets: Sequence[QuestionSet], params: Mapping[str, Any]) -> tuple[Values, Tables]:
    """Memory Worth learned on some questions, low-value turns suppressed on the rest: the values
    the prose reads (at the chapter's thresholds), the per-split rows and the threshold sweep."""
    k, share, splits, seed = (
        params["question_k"],
        params["mw_train_share"],
        params["mw_splits"],
        params["seed"],
    )

    def run(min_evidence: float, low: float) -> Any:
        return held_out(sets, k, share, splits, seed, min_evidence, low)

    headline = run(params["mw_min_evidence"], params["mw_low_threshold"])
    summary = headline.summary()
    report = flag_report(sets, k, share, splits, seed, params["mw_min_evidence"], params["mw_low_threshold"])
    values: dict[str, Any] = {f"mw_{key}": value for key, value in summary.items()}
    values["mw_n_splits"] = int(summary["n_splits"])
    values.update(
        mw_plain=float(np.mean(headline.plain)),
        mw_suppressed=float(np.mean(headline.suppressed)),
        mw_flagged_mean=float(np.mean(headline.n_flagged)),
        mw_gained=int(headline.gained.sum()),
        mw_lost=int(headline.lost.sum()),
        mw_test_questions=int(headline.n_test[0]),
        mw_n_flagged=report.n_flagged,
        mw_flagged_evidence=report.evidence_of_test,
        mw_flagged_hitchhikers=report.hitchhikers,
        mw_flagged_distractors=report.distractors,
        **{f"mw_worth_{group}": value for group, value in report.mean_worth.items()},
        **{f"mw_judged_{group}": value for group, value in report.n_worth.items()},
        mw_min_retrievals=DEFAULT_MIN_RETRIEVALS,
        mw_co_share=DEFAULT_CO_SHARE,
    )
    hitch, evidence = report.mean_worth["hitchhiker"], report.mean_worth["evidence"]
    values["mw_hitchhiker_vs_evidence"] = (
        "below" if hitch < evidence else "above" if hitch > evidence else "equal to"
    )
    if math.isnan(hitch) or math.isnan(evidence):  # no turn of a group judged: a small file of one's own
        values["mw_hitchhiker_vs_evidence"] = "not comparable with"
    per_split = [
        {"split": s, "test questions": int(headline.n_test[s]), "flagged": int(headline.n_flagged[s]),
         "hit plain": float(headline.plain[s]), "hit suppressed": float(headline.suppressed[s]),
         "gained": int(headline.gained[s]), "lost": int(headline.lost[s])}
        for s in range(splits)
    ]  # fmt: skip
    sweep = []
    for min_evidence in params["mw_min_evidences"]:
        for low in params["mw_low_thresholds"]:
            result = run(min_evidence, low)
            sweep.append(
                {"min_evidence": min_evidence, "low_threshold": low, "flagged (mean)": float(np.mean(result.n_flagged)),
                 **result.summary()}
            )  # fmt: skip
    least = min(sweep, key=lambda r: (r["min_evidence"], -r["low_threshold"]))
    values.update(
        mw_least_evidence=least["min_evidence"],
        mw_least_low=least["low_threshold"],
        mw_least_difference=least["mean_difference"],
        mw_least_share_worse=least["share_worse"],
        mw_least_flagged=least["flagged (mean)"],
    )
    return values, {"worth-splits": per_split, "worth-sweep": sweep}


def credit_results(sets: Sequence[QuestionSet], params: Mapping[str, Any]) -> tuple[Values, Tables]:
    """Exact effects over every question, and the three flagging rules of
    :func:`~.question_credit.question_credit` at each of ``credit_epsilons`` on the splits of
    :func:`worth_results`: the values the prose reads and one summary row per rule and rate."""
    k = params["question_k"]
    helping = crowding = retrieved = both = misses = fixable = 0
    for qs in sets:
        effects = turn_effects(qs, k)
        n_retrieved, helps, crowds = effects.counts(np.arange(qs.n_questions), qs.n_turns)
        retrieved += int((n_retrieved > 0).sum())
        helping += int((helps > 0).sum())
        crowding += int((crowds > 0).sum())
        both += int(((helps > 0) & (crowds > 0)).sum())
        misses += int((~effects.hit).sum())
        fixable += int(np.any(effects.delta < 0, axis=1).sum())  # a miss one withheld turn turns into a hit
    rows = question_credit(
        sets, k, params["credit_epsilons"], params["mw_train_share"], params["mw_splits"], params["seed"],
        params["mw_min_evidence"], params["mw_low_threshold"],
    )  # fmt: skip
    table = [row.summary() for row in rows]
    values: Values = dict(
        credit_retrieved=retrieved, credit_helping=helping, credit_crowding=crowding, credit_both=both,
        credit_misses=misses, credit_misses_fixable=fixable,
        credit_epsilon_max=max(params["credit_epsilons"]),
    )  # fmt: skip
    keys = {"memory worth": "mw", "omission": "omission", "exact on train": "oracle"}
    for where, epsilon in (("none", 0.0), ("max", max(params["credit_epsilons"]))):
        for row in table:
            if row["epsilon"] == epsilon:
                prefix = f"credit_{keys[row['rule']]}_{where}"
                values.update({f"{prefix}_{suffix}": row[column] for column, suffix in _SUFFIXES.items()})
    return values, {"credit": table}
