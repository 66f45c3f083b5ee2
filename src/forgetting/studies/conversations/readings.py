"""What the real-conversation chapter reads off its own results: the recommendation by footprint
budget, which signal carries information, and the counts behind its sentences about the data.

Everything here is computed from the chapter's tables (so a page built without the data reads
the same numbers from the published CSV files) or from the loaded conversations, never from a
new run of a policy:

* :func:`recommendation_rows` -- at each footprint budget, the rule that keeps the most
  evidence per share of turns held, with Wilson intervals, and keeping everything;
* :func:`signal_values` -- evidence kept per share held by each signal's rules (frequency:
  LFU; recency: the window and LRU; age: FIFO; decay), at the budgets up to the headline one;
* :func:`sweep_values` -- MemoryBank's largest footprint at each recall depth, and how many
  distinct outcomes the settings that forget anything have;
* :func:`reference_values` -- what LoCoMo's evidence ids that name no turn are;
* :func:`image_values` -- which captioned turns carry an image (``img_url``);
* :func:`credit_curves`, :func:`credit_claims` -- the credit section's rows by rule and rate,
  and the comparisons its prose reads.
"""

from __future__ import annotations

import io
import json
import math
import re
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from ...conversations.records import Conversation, evidence_repairs, resolve_evidence
from ..stats import Z_95
from .benchmark import ADVERSARIAL, question_index

__all__ = [
    "FREQUENCY",
    "PASS_FAMILIES",
    "family_list",
    "RECENCY",
    "credit_claims",
    "credit_curves",
    "image_values",
    "recommendation_rows",
    "recommendation_values",
    "reference_values",
    "repair_rows",
    "retrieval_values",
    "scored_counts",
    "signal_values",
    "sweep_values",
    "wilson",
    "worth_sweep_values",
]

#: The forgetting-pass schedules each field rule is run with (when a pass runs is left open).
PASS_FAMILIES = ("session", "turn", "day")

#: The families whose rule ranks turns by how often they are recalled.
FREQUENCY = ("LFU",)
#: The families whose rule keeps what was recalled (or stored) last.
RECENCY = ("Recency window", "LRU")
#: The families whose rule forgets by age alone, and seeded random eviction.
AGE = ("FIFO",)
RANDOM = ("Random eviction",)
DECAY = ("Ebbinghaus, turns", "Ebbinghaus, days")
KEEP_EVERYTHING = "Keep everything"


def family_list(families: Sequence[str]) -> str:
    """Families for a sentence: a rule with all of :data:`PASS_FAMILIES` named once.

    >>> family_list(["LFU", "YourMemory, pass per session", "YourMemory, pass per turn", "YourMemory, pass per day"])
    'LFU and YourMemory with every pass schedule'
    """
    names: list[str] = []
    for family in families:
        base, _, schedule = family.partition(", pass per ")
        whole = all(f"{base}, pass per {p}" in families for p in PASS_FAMILIES)
        name = f"{base} with every pass schedule" if schedule and whole else family
        if name not in names:
            names.append(name)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def wilson(successes: float, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``successes / n`` (``successes`` may be a mean of
    replicates' counts): ``(low, high)``; ``(nan, nan)`` for ``n == 0``.

    >>> tuple(round(x, 4) for x in wilson(5, 10))
    (0.2366, 0.7634)
    """
    if n <= 0:
        return math.nan, math.nan
    p = successes / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    scale = 1 + z * z / n
    return max(0.0, (centre - half) / scale), min(1.0, (centre + half) / scale)


def scored_counts(conversations: Sequence[Conversation]) -> dict[str, int]:
    """The denominators of the pooled shares: evidence references of the scored questions of
    categories 1-4 (a turn once per question naming it) and those questions; and how many of
    them have more than one evidence turn (where hit@k, recall@k and all-evidence@k differ)."""
    evidence = questions = several = 0
    for conversation in conversations:
        index = question_index(conversation)
        main = index.category != ADVERSARIAL
        questions += int(main.sum())
        evidence += int(index.pooled_evidence[0].size)
        several += sum(ev.size > 1 for ev, m in zip(index.evidence, main.tolist()) if m)
    return {"n_evidence_scored": evidence, "n_questions_scored": questions, "n_questions_several": several}


def _lift(row: Mapping[str, Any]) -> float:
    share = float(row.get("turns_share", math.nan))
    return float(row["evidence_kept"]) / share if share > 0 else math.nan


def _within(budgets: Sequence[Mapping[str, Any]], budget: float) -> dict[str, Mapping[str, Any]]:
    """Each family's best setting within ``budget`` (families with none left out)."""
    return {
        str(r["family"]): r
        for r in budgets
        if float(r["budget"]) == budget and float(r.get("turns_share", math.nan)) > 0
    }


def recommendation_rows(
    budgets: Sequence[Mapping[str, Any]],
    frontier: Sequence[Mapping[str, Any]],
    n_evidence: int,
    n_questions: int,
) -> list[dict[str, Any]]:
    """What to use at each budget of the budgets table: the family whose best setting within it
    keeps the most evidence *per share of turns held* (1: what a uniformly random subset of that
    size keeps on average), then keeping everything (no budget).

    Each row: the rule and its setting, the shares of turns and tokens it holds, evidence kept
    and hit@k over what it holds with 95 % Wilson intervals, LoCoMo's recall@k and
    all-evidence@k over what it holds (a mean of shares and a proportion: no interval) (over ``n_evidence`` evidence
    references and ``n_questions`` questions, read as independent: they cluster in a few
    conversations, so the intervals are narrower than a resampling of conversations would
    give), evidence per share held with the interval of evidence kept divided by the share,
    the most evidence any family keeps within the budget and that family (which may hold more
    of the budget and less per share).
    """
    rows: list[dict[str, Any]] = []
    for budget in sorted({float(r["budget"]) for r in budgets}):
        within = {f: r for f, r in _within(budgets, budget).items() if f != KEEP_EVERYTHING}
        if not within:
            continue
        family = max(within, key=lambda f: (_lift(within[f]), f))
        best = within[family]
        top = max(float(r["evidence_kept"]) for r in within.values())
        most = [f for f, r in within.items() if float(r["evidence_kept"]) == top]
        rows.append(_row(budget, family, best, n_evidence, n_questions, within[most[0]], family_list(most)))
    keep = [r for r in frontier if r["family"] == KEEP_EVERYTHING]
    if keep:
        rows.append(_row(1.0, KEEP_EVERYTHING, keep[0], n_evidence, n_questions, keep[0], KEEP_EVERYTHING))
    return rows


def recommendation_values(recommend: Sequence[Mapping[str, Any]], headline_budget: float) -> dict[str, Any]:
    """What the recommendation's sentences read off its table: the budgets at which LFU leads
    (``recommend_lfu_budgets_text``), whether it leads at every budget up to ``headline_budget``
    (``recommend_lfu_to_headline``), and a clause naming the other leaders with their margin over
    a random subset (``recommend_others_text``, empty when there are none)."""
    rows = [r for r in recommend if r["rule"] != KEEP_EVERYTHING]
    lfu = [float(r["budget"]) for r in rows if r["rule"] == "LFU"]
    others = [r for r in rows if r["rule"] != "LFU"]
    clause = "; ".join(
        f"at {float(r['budget']):g} of the turns it is {r['rule']}, "
        f"{float(r['evidence per share held']):.2f} times a random subset"
        for r in others
    )
    return {
        "recommend_lfu_budgets_text": ", ".join(f"{b:g}" for b in lfu) if lfu else "no budget",
        "recommend_lfu_to_headline": all(
            r["rule"] == "LFU" for r in rows if float(r["budget"]) <= headline_budget
        ),
        "recommend_others_text": f" ({clause})" if clause else "",
    }


def _row(
    budget: float,
    family: str,
    row: Mapping[str, Any],
    n_evidence: int,
    n_questions: int,
    most: Mapping[str, Any],
    most_family: str,
) -> dict[str, Any]:
    share, kept, hit = float(row["turns_share"]), float(row["evidence_kept"]), float(row["hit_held"])
    kept_low, kept_high = wilson(kept * n_evidence, n_evidence)
    hit_low, hit_high = wilson(hit * n_questions, n_questions)
    value = "" if family == KEEP_EVERYTHING else f"{row['parameter']} = {float(row['value']):g}"
    return {
        "budget": budget,
        "rule": family,
        "setting": value,
        "turns held": share,
        "tokens held": float(row["tokens_share"]),
        "evidence kept": kept,
        "evidence low": kept_low,
        "evidence high": kept_high,
        "hit@k held": hit,
        "hit low": hit_low,
        "hit high": hit_high,
        "recall@k held": float(row["recall_held"]),
        "all-evidence@k held": float(row["every_held"]),
        "evidence per share held": kept / share,
        "per share low": kept_low / share,
        "per share high": kept_high / share,
        "most evidence within": float(most["evidence_kept"]),
        "kept by": most_family,
    }


def _range(
    budgets: Sequence[Mapping[str, Any]], families: Sequence[str], chosen: Sequence[float]
) -> tuple[float, float]:
    lifts = [_lift(r) for b in chosen for f, r in _within(budgets, b).items() if f in families]
    return (min(lifts), max(lifts)) if lifts else (math.nan, math.nan)


def signal_values(budgets: Sequence[Mapping[str, Any]], headline_budget: float) -> dict[str, Any]:
    """Evidence kept per share of turns held (1: a uniformly random subset of that size) by the
    rules of each signal, over the budgets up to ``headline_budget``, as ``signal_<name>_min`` and
    ``_max``; the range over every rule (keep everything aside) at the budgets above it
    (``signal_above_min``, ``_max``; NaN when there are none); and the rules whose best setting
    within ``headline_budget`` keeps more than a random subset (``signal_beat_random_headline``)."""
    chosen = sorted({float(r["budget"]) for r in budgets if float(r["budget"]) <= headline_budget})
    above = sorted({float(r["budget"]) for r in budgets if float(r["budget"]) > headline_budget})
    values: dict[str, Any] = {
        "signal_budgets_text": ", ".join(f"{b:g}" for b in chosen),
        "signal_above_text": ", ".join(f"{b:g}" for b in above),
    }
    groups = {"frequency": FREQUENCY, "recency": RECENCY, "age": AGE, "random": RANDOM, "decay": DECAY}
    for name, families in groups.items():
        values[f"signal_{name}_min"], values[f"signal_{name}_max"] = _range(budgets, families, chosen)
    every = sorted({str(r["family"]) for r in budgets} - {KEEP_EVERYTHING})
    values["signal_above_min"], values["signal_above_max"] = _range(budgets, every, above)
    headline = _within(budgets, headline_budget)
    beat = [f for f, r in headline.items() if f != KEEP_EVERYTHING and _lift(r) > 1]
    values["signal_beat_random_headline"] = family_list(beat) if beat else "no rule"
    return values


def sweep_values(sweep: Sequence[Mapping[str, Any]], headline_k: int) -> dict[str, Any]:
    """MemoryBank's (v0's) largest share of turns held over every retrieval setting, and at which
    recall depth; how many of the settings that forget anything give distinct outcomes
    (retrieval setting, evidence kept, hit@k held and turns held); whether each YourMemory clock
    gives the same rows under every pass schedule (``yourmemory_schedules_same_<clock>``) and
    its settings per schedule over every retrieval setting (``yourmemory_n_settings_<clock>``)."""
    bank = [r for r in sweep if str(r["family"]).startswith("MemoryBank, pass per")]  # v0, its cap swept
    top = max(bank, key=lambda r: (float(r["turns_share"]), -int(r["recall_k"])))
    forgetting = [r for r in sweep if float(r["turns_share"]) < 1.0]
    outcomes = {
        (int(r["recall_k"]), float(r["min_similarity"]), float(r["evidence_kept"]), float(r["hit_held"]),
         float(r["turns_share"]))
        for r in forgetting
    }  # fmt: skip
    same: dict[str, Any] = {}
    for clock, family in (("active", "YourMemory"), ("calendar", "YourMemory, calendar days")):
        by_schedule = [
            sorted(
                (int(r["recall_k"]), float(r["min_similarity"]), float(r["value"]),
                 *(float(r[m]) for m in ("evidence_kept", "hit_held", "recall_held", "every_held", "turns_share")))
                for r in sweep
                if r["family"] == f"{family}, pass per {p}"
            )
            for p in PASS_FAMILIES
        ]  # fmt: skip
        same[f"yourmemory_schedules_same_{clock}"] = all(rows == by_schedule[0] for rows in by_schedule[1:])
        same[f"yourmemory_n_settings_{clock}"] = len(by_schedule[0])
    clocks = [c for c in ("active", "calendar") if same[f"yourmemory_schedules_same_{c}"]]
    texts = {("active", "calendar"): "on both clocks", ("active",): "on the active-day clock only",
             ("calendar",): "on calendar days only", (): "on neither clock"}  # fmt: skip
    return {
        **same,
        "yourmemory_schedules_same_text": texts[tuple(clocks)],
        "bank_max_share_any": float(top["turns_share"]),
        "bank_max_share_k": int(top["recall_k"]),
        "n_outcomes_forgetting": len(outcomes),
        "bank_max_share_headline_k": headline_k,
    }


def reference_values(conversations: Sequence[Conversation]) -> dict[str, Any]:
    """The evidence ids that name no turn as written, split: *malformed* ones, which the loader
    repairs (:func:`~forgetting.conversations.records.repaired_reference`: ``D30:05``,
    ``D:11:26``, ``D8:6; D9:17``, ids separated by spaces), and the others (naming no turn
    however read, counted and left out); the questions with an empty evidence list; and the
    questions the repairs make scorable (no evidence id named a turn as written)."""
    malformed: list[str] = []
    missing: list[str] = []
    empty = rescued = 0
    for conversation in conversations:
        for question in conversation.questions:
            empty += not question.evidence
            resolved = resolve_evidence(conversation, question, repair=True)
            malformed += resolved.repaired
            missing += resolved.unknown
            rescued += bool(resolved.repaired) and not resolve_evidence(conversation, question).turns
    return {
        "n_unresolved_malformed": len(malformed),
        "n_unresolved_missing": len(missing),
        "n_empty_evidence": empty,
        "n_questions_repaired": rescued,
        "unresolved_malformed_text": ", ".join(f"'{m}'" for m in malformed),
        "unresolved_missing_text": ", ".join(f"'{m}'" for m in missing),
    }


def repair_rows(conversations: Sequence[Conversation]) -> list[dict[str, Any]]:
    """One row per repaired evidence reference: the conversation, the question's position in its
    ``qa`` list and category, the reference as written and the turn ids it is read as."""
    rows = []
    for repair in evidence_repairs(conversations):
        conversation = next(c for c in conversations if c.name == repair.conversation)
        rows.append(
            {
                "conversation": repair.conversation,
                "question": repair.question,
                "category": conversation.questions[repair.question].category,
                "written": repair.written,
                "read as": " ".join(repair.read),
            }
        )
    return rows


def _natural(name: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _samples(path: Path, members: Sequence[str] | None) -> list[Mapping[str, Any]]:
    """The raw samples of a LoCoMo zip (``members``) or of a file of one's own (``None``: a JSON
    list of samples, or a zip whose ``.json`` members are each one, in natural order)."""
    data = path.read_bytes()
    if zipfile.is_zipfile(io.BytesIO(data)):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            if members is None:
                members = sorted(
                    (n for n in archive.namelist()
                     if n.lower().endswith(".json") and not any(p.startswith(".") or p == "__MACOSX"
                                                                for p in PurePosixPath(n).parts)),
                    key=_natural,
                )  # fmt: skip
            return [json.loads(archive.read(m)) for m in members]
    document = json.loads(data)
    return list(document)


def image_values(
    path: str | Path, members: Sequence[str] | None, positions: Sequence[int] | None
) -> dict[str, int]:
    """Of the turns with a ``blip_caption`` (what the loader keeps and the code appends to the
    turn's text), those that also carry an image (a non-empty ``img_url``) and those that carry
    only the caption, in the samples at ``positions`` (``None``: all) of the file at ``path``."""
    samples = _samples(Path(path), members)
    if positions is not None:
        samples = [samples[p] for p in positions]
    with_url = caption_only = 0
    for sample in samples:
        conversation = sample.get("conversation", sample)
        for key, turns in conversation.items():
            if re.fullmatch(r"session_\d+", key) and isinstance(turns, list):
                for turn in turns:
                    if "blip_caption" in turn:
                        if turn.get("img_url"):
                            with_url += 1
                        else:
                            caption_only += 1
    return {"n_images_url": with_url, "n_images_caption_only": caption_only}


def retrieval_values(retrieval: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Which families keep the most evidence within the budget at some retrieval setting of the
    retrieval table (``retrieval_leaders``, a sentence's list), and whether MemoryBank's rule keeps
    the least at every one (``bank_last_everywhere``)."""
    settings: dict[tuple[float, float], dict[str, float]] = {}
    for r in retrieval:
        share = float(r["evidence_kept"])
        if share == share:  # NaN: no setting of the family within the budget
            setting = settings.setdefault((float(r["recall_k"]), float(r["min_similarity"])), {})
            setting[str(r["family"])] = share
    leaders: list[str] = []
    last = True
    for kept in settings.values():
        top, bottom = max(kept.values()), min(kept.values())
        leaders += [f for f, v in kept.items() if v == top and f not in leaders]
        last = last and all(f.startswith("MemoryBank") for f, v in kept.items() if v == bottom)
    ordered = [f for f in dict.fromkeys(str(r["family"]) for r in retrieval) if f in leaders]
    return {"retrieval_leaders": family_list(ordered) if ordered else "", "bank_last_everywhere": last}


def worth_sweep_values(rows: Sequence[Mapping[str, Any]], min_evidence: float, low: float) -> dict[str, Any]:
    """How many threshold cells the Memory Worth sweep has, and whether the chapter's default
    (``min_evidence``, ``low``) is also the cell with the largest mean change (``"also"``, else
    ``"not"``): if it is, the chapter's figure is the sweep's best case."""
    best = max(rows, key=lambda r: float(r["mean_difference"]))
    default = (float(best["min_evidence"]), float(best["low_threshold"])) == (float(min_evidence), float(low))
    return {"mw_sweep_cells": len(rows), "mw_default_is_best": "also" if default else "not"}


#: The credit section's rules, in the order the figure draws them.
CREDIT_RULES = ("memory worth", "omission", "exact on train")


def credit_curves(credit: Any) -> tuple[list[float], dict[str, Any]]:
    """The credit table's rates (ascending) and, per rule of :data:`CREDIT_RULES`, its rows
    indexed by rate (a pandas DataFrame each)."""
    rates = sorted(set(credit["epsilon"]))
    return rates, {
        rule: credit[credit["rule"] == rule].set_index("epsilon").loc[rates] for rule in CREDIT_RULES
    }


def credit_claims(values: Mapping[str, Any], credit: Any) -> list[str]:
    """The comparisons the credit section's prose reads, each that fails (empty: all hold)."""
    rates, curves = credit_curves(credit)
    worth, omission, oracle = (curves[r] for r in CREDIT_RULES)
    positive = [e for e in rates if e > 0]
    checks = {
        "the oracle beats Memory Worth": values["credit_oracle_none_difference"] < values["credit_mw_none_difference"],
        "the oracle's flags crowd out more": values["credit_oracle_none_crowding"] < values["credit_mw_none_crowding"],
        "the oracle's spread misses 0": values["credit_oracle_none_low"] < 0 < values["credit_oracle_none_high"],
        "Memory Worth's spread misses 0": values["credit_mw_none_low"] < 0 < values["credit_mw_none_high"],
        "omission's flags beat Memory Worth's at some rate": all(
            omission.loc[e, "mean_difference"] < worth.loc[e, "mean_difference"] for e in positive
        ),
        "omission scores more than a fifth of the turns": omission["scored (mean)"].max()
        < oracle["scored (mean)"].max() / 5,
        "the oracle depends on the rate": oracle["mean_difference"].nunique() == 1,
        "the oracle beats Memory Worth at some rate": bool(
            (worth["mean_difference"] > oracle["mean_difference"]).all()
        ),
        "no turn both helps one question and crowds out another": values["credit_both"] > 0,
        "a rule changes held-out hit@k by a point or more": bool((credit["mean_difference"].abs() < 0.01).all()),
        "a rule's spread excludes 0 at some rate": bool(
            ((credit["flagged (mean)"] <= 0) | ((credit["low"] < 0) & (credit["high"] > 0))).all()
        ),
    }  # fmt: skip
    return [claim for claim, holds in checks.items() if not holds]
