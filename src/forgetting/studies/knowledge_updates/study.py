"""The knowledge-update chapter's computation in one call: the histories, the sweep, its readings.

:func:`prepare` loads LongMemEval's questions (the oracle setting, or the S setting's knowledge
updates) and embeds what the study stores (:mod:`.histories`); :func:`chapter_results` sweeps every
rule (:mod:`.sweep`) and returns the values the chapter glues and the tables it shows, as plain
numbers and rows (a page built without the data shows the published ones instead).
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...conversations.longmemeval import LmeQuestion, QuestionType, Role, load_longmemeval
from ...conversations.longmemeval_source import Setting as LmeSetting
from ...text.encoder import get_encoder
from ..conversations.embeddings import DTYPE
from ..conversations.readings import family_list
from ..conversations.sweep import BANK_VARIANTS, YOURMEMORY_VARIANTS, policy_grid
from ..executor import Executor
from .histories import OLD_TYPES, History, embed_histories, fragile_cosines, texts_to_embed
from .sweep import SUPERSEDE, Grid, run_sweep

__all__ = [
    "SUPERSEDE",
    "TABLES",
    "Prepared",
    "chapter_results",
    "dataset_rows",
    "prepare",
    "recommendation_rows",
    "s_setting_cost",
]

#: The tables the chapter publishes, by name (``data/results/knowledge-updates-<name>.csv``).
TABLES = ("dataset", "recommend", "updates", "types")


@dataclass(frozen=True)
class Prepared:
    """The questions replayed, their histories and the model's digest."""

    setting: str
    questions: list[LmeQuestion]
    histories: list[History]
    model_sha256: str


def prepare(
    path: str | os.PathLike[str],
    s_setting: bool,
    per_type: int,
    cache_dir: str | os.PathLike[str],
    executor: Executor,
) -> Prepared:
    """The first ``per_type`` questions of each type (manifest order) of the oracle setting, or of
    the S setting's knowledge updates (``s_setting``), loaded and embedded."""
    setting = LmeSetting.S if s_setting else LmeSetting.ORACLE
    seen: dict[str, int] = {}
    questions = []
    for question in load_longmemeval(Path(path), setting):
        seen[question.question_type] = seen.get(question.question_type, 0) + 1
        if seen[question.question_type] <= per_type:
            questions.append(question)
    histories = embed_histories(questions, cache_dir, executor)
    return Prepared(setting.value, questions, histories, get_encoder(DTYPE).model_sha256)


def _median_days(questions: Sequence[LmeQuestion]) -> float:
    """Median over ``questions`` of the whole days from the first session's date to the last's."""
    days = [(q.sessions[-1].time.date() - q.sessions[0].time.date()).days for q in questions]
    return float(statistics.median(days)) if days else math.nan


def _median_chars(questions: Sequence[LmeQuestion], role: Role) -> float:
    """Median length in characters of the turns of ``role`` over every history (NaN: none)."""
    lengths = [len(t.content) for q in questions for t in q.turns if t.role == role]
    return float(statistics.median(lengths)) if lengths else math.nan


def dataset_rows(prepared: Prepared) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Counts by question type (one row each) and the values the prose glues."""
    rows = []
    for kind in QuestionType:
        mine = [h for h in prepared.histories if h.kind == kind.value]
        questions = [h.question for h in mine]
        rows.append(
            {
                "question type": kind.value,
                "questions": len(mine),
                "abstentions": sum(q.abstention for q in questions),
                "sessions": sum(len(q.sessions) for q in questions),
                "turns": sum(len(q.turns) for q in questions),
                "user turns (memories)": sum(len(h.ids) for h in mine),
                "evidence turns": sum(len(q.evidence) for q in questions),
                "user evidence turns": sum(int(h.evidence.size) for h in mine),
                "questions with user evidence": sum(bool(h.evidence.size) for h in mine),
                "sessions after the question": sum(
                    s.time > q.question_date for q in questions for s in q.sessions
                ),
                "median days, first to last session": _median_days(questions),
                "scored": "yes" if kind.value in OLD_TYPES or kind == QuestionType.KNOWLEDGE_UPDATE else "no",
            }
        )
    questions = prepared.questions
    updates = [h for h in prepared.histories if h.kind == QuestionType.KNOWLEDGE_UPDATE.value]
    evidence = [t for q in questions for t in q.evidence]
    values: dict[str, Any] = {
        "setting": prepared.setting,
        "n_questions": len(questions),
        "n_sessions": sum(len(q.sessions) for q in questions),
        "n_turns": sum(len(q.turns) for q in questions),
        "n_user_turns": sum(len(h.ids) for h in prepared.histories),
        "n_texts_embedded": len(texts_to_embed(questions)),
        "n_evidence": len(evidence),
        "n_evidence_assistant": sum(t.role == Role.ASSISTANT for t in evidence),
        "n_evidence_assistant_ssa": sum(
            t.role == Role.ASSISTANT
            for q in questions
            if q.question_type == QuestionType.SINGLE_SESSION_ASSISTANT
            for t in q.evidence
        ),
        "n_late_questions": sum(q.sessions[-1].time > q.question_date for q in questions),
        "n_late_evidence": sum(
            t.has_answer for q in questions for s in q.sessions if s.time > q.question_date for t in s.turns
        ),
        "n_updates": len(updates),
        "n_conflicts": sum(h.conflict for h in updates),
        "n_updates_abstention": sum(h.question.abstention for h in updates),
        "n_updates_new_only": sum(bool(h.current.size) and not h.stale.size for h in updates),
        "n_old_questions": sum(h.kind in OLD_TYPES for h in prepared.histories),
        "n_old_evidence": sum(int(h.evidence.size) for h in prepared.histories if h.kind in OLD_TYPES),
        "n_shared_sessions": sum(len(q.sessions) for q in questions)
        - len({s.session_id for q in questions for s in q.sessions}),
        "chars_user_median": _median_chars(questions, Role.USER),
        "chars_assistant_median": _median_chars(questions, Role.ASSISTANT),
        "days_old": _median_days([h.question for h in prepared.histories if h.kind in OLD_TYPES]),
        "days_updates": _median_days([h.question for h in updates]),
        "n_fragile": sum(fragile_cosines(h) for h in prepared.histories),
        "model_sha256": prepared.model_sha256,
    }
    return values, rows


def s_setting_cost(path: str | os.PathLike[str]) -> dict[str, float]:
    """What replaying the S setting's knowledge updates would embed: its user turns, its distinct
    texts (user turns and questions), those of them the oracle setting's texts do not hold, and
    their ratio to the oracle's texts (how many times the oracle's encoding a cold S run adds)."""
    oracle = set(texts_to_embed(load_longmemeval(Path(path), LmeSetting.ORACLE)))
    questions = load_longmemeval(Path(path), LmeSetting.S)
    texts = texts_to_embed(questions)
    new = sum(text not in oracle for text in texts)
    return {
        "s_questions": len(questions),
        "s_sessions": sum(len(q.sessions) for q in questions),
        "s_user_turns": sum(t.role == Role.USER for q in questions for t in q.turns),
        "s_texts": len(texts),
        "s_texts_new": new,
        "s_oracle_texts": len(oracle),
        "s_cost_ratio": new / len(oracle),
    }


def grid_of(params: Mapping[str, Any]) -> Grid:
    """The chapter's grid: the LoCoMo chapter's rules over this chapter's ranges (MemoryBank's pass
    at every session, YourMemory's at every turn) and the contradiction rule's thresholds."""
    settings = policy_grid(
        params["stabilities_turns"], params["stabilities_days"], params["windows"], params["capacities"],
        params["bank_strengths"], params["importances"], params["eviction_threshold"], "session", "turn",
        params["seed"], params["replicates"],
    )  # fmt: skip
    return Grid(tuple(settings), tuple(float(t) for t in params["thresholds"]))


def _label(row: Mapping[str, Any]) -> str:
    if row["family"] == "Keep everything" or row["parameter"] == "-":  # a rule with nothing swept
        return str(row["family"])
    joint = " " if str(row["parameter"]).endswith(">") else " = "
    return f"{row['family']}, {row['parameter']}{joint}{float(row['value']):g}"


def recommendation_rows(sweep: Sequence[Mapping[str, Any]], floors: Sequence[float]) -> list[dict[str, Any]]:
    """For each floor of old-information evidence kept: the setting, of any rule, that ranks the
    update first in the most conflicts among those keeping at least that share (ties: fewer
    stale-only answers, more old evidence, fewer turns held, then the label); last, keeping
    everything. A floor no setting reaches gets NaN measures."""
    measures = ("old_evidence_kept", "update_current_first", "update_stale_only", "update_current_top",
                "turns_share", "update_current_kept", "update_stale_kept", "update_first_gained",
                "update_first_lost")  # fmt: skip
    rows = []
    for floor in floors:
        mine = [r for r in sweep if float(r["old_evidence_kept"]) >= floor]
        if not mine:
            rows.append({"floor": floor, "rule": "none", "setting": "", **dict.fromkeys(measures, math.nan)})
            continue
        best = _best(mine)
        rows.append({"floor": floor, "rule": best["family"], "setting": _label(best),
                     **{m: float(best[m]) for m in measures}})  # fmt: skip
    keep = next(r for r in sweep if r["family"] == "Keep everything")
    rows.append({"floor": math.nan, "rule": "Keep everything", "setting": "Keep everything",
                 **{m: float(keep[m]) for m in measures}})  # fmt: skip
    return rows


def _rank(row: Mapping[str, Any]) -> tuple[float, float, float, float, str]:
    """The order of the recommendation: the update ranked first in the most conflicts (ties: fewer
    stale-only answers, more old evidence, fewer turns held, then the label)."""
    return (-float(row["update_current_first"]), float(row["update_stale_only"]),
            -float(row["old_evidence_kept"]), float(row["turns_share"]), _label(row))  # fmt: skip


def _best(rows: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The first of ``rows`` in the recommendation's order (:func:`_rank`)."""
    return min(rows, key=_rank)


#: The rules that forget on a clock of days (the others count turns or memories): decay on days,
#: MemoryBank at each commit and YourMemory on each of its clocks (the LoCoMo chapter's families).
DAY_FAMILIES = ("Ebbinghaus, days", "MemoryBank", *BANK_VARIANTS, *YOURMEMORY_VARIANTS)


def sweep_values(sweep: Sequence[Mapping[str, Any]], floor: float) -> dict[str, Any]:
    """What the prose reads off the sweep: keeping everything, the best setting overall, the best
    of the rules on a day clock and of the others keeping at least ``floor`` of the old evidence,
    LFU's worst stale-only share, the contradiction rule's best and whether a day-clock setting
    beats it on both measures."""
    keep = next(r for r in sweep if r["family"] == "Keep everything")
    values: dict[str, Any] = {
        "keep_current_first": float(keep["update_current_first"]),
        "keep_stale_only": float(keep["update_stale_only"]),
        "keep_current_top": float(keep["update_current_top"]),
        "keep_old_evidence": float(keep["old_evidence_kept"]),
    }
    forgetting = [r for r in sweep if r["family"] != "Keep everything"]
    best = _best(forgetting)
    values.update(
        best_current_first=float(best["update_current_first"]),
        best_current_first_label=_label(best),
        best_current_first_old=float(best["old_evidence_kept"]),
        best_current_first_stale_only=float(best["update_stale_only"]),
    )
    above = [r for r in forgetting if float(r["update_current_first"]) > values["keep_current_first"]]
    values["n_settings"] = len(forgetting)
    values["n_settings_above_keep"] = len(above)
    values["n_settings_above_keep_full_old"] = sum(float(r["old_evidence_kept"]) >= 1.0 for r in above)
    values["max_old_above_keep"] = max((float(r["old_evidence_kept"]) for r in above), default=math.nan)
    values["headline_floor"] = floor
    for key, wanted in (("day", True), ("turn", False)):
        mine = [r for r in forgetting if (r["family"] in DAY_FAMILIES) is wanted and r["family"] != SUPERSEDE
                and float(r["old_evidence_kept"]) >= floor]  # fmt: skip
        best_mine = _best(mine) if mine else None
        values[f"{key}_best_first"] = (
            math.nan if best_mine is None else float(best_mine["update_current_first"])
        )
        values[f"{key}_best_label"] = "none" if best_mine is None else _label(best_mine)
        values[f"{key}_best_old"] = math.nan if best_mine is None else float(best_mine["old_evidence_kept"])
        for side in ("gained", "lost"):
            measure = f"update_first_{side}"
            values[f"{key}_best_{side}"] = math.nan if best_mine is None else float(best_mine[measure])
    lfu = [r for r in sweep if r["family"] == "LFU"]
    if lfu:
        worst = max(lfu, key=lambda r: (float(r["update_stale_only"]), _label(r)))
        values.update(lfu_stale_only=float(worst["update_stale_only"]), lfu_stale_only_label=_label(worst),
                      lfu_stale_only_old=float(worst["old_evidence_kept"]))  # fmt: skip
    supersede = [r for r in sweep if r["family"] == SUPERSEDE]
    if supersede:
        top = _best(supersede)
        values.update(
            supersede_best=float(top["update_current_first"]),
            supersede_best_threshold=float(top["value"]),
            supersede_best_old=float(top["old_evidence_kept"]),
            supersede_best_stale_only=float(top["update_stale_only"]),
            supersede_best_stale_kept=float(top["update_stale_kept"]),
            supersede_best_current_kept=float(top["update_current_kept"]),
            supersede_min_old=min(float(r["old_evidence_kept"]) for r in supersede),
            supersede_max_old=max(float(r["old_evidence_kept"]) for r in supersede),
            supersede_beaten=any(
                r["family"] in DAY_FAMILIES
                and float(r["update_current_first"]) > float(top["update_current_first"])
                and float(r["old_evidence_kept"]) > float(top["old_evidence_kept"])
                for r in sweep
            ),
        )
    return values


#: The columns of the ``updates`` and ``types`` tables (each a part of the sweep's rows).
_SETTING = ("family", "parameter", "value", "replicates", "turns_share", "old_evidence_kept")
_UPDATES = ("update_current_kept", "update_stale_kept", "update_current_first", "update_stale_only",
            "update_current_top", "update_first_gained", "update_first_lost")  # fmt: skip
_TYPES = ("old_hit_held", *(f"evidence_kept {kind}" for kind in OLD_TYPES))


def rule_list(families: Sequence[str]) -> str:
    """Families for a sentence, separated by semicolons when a name holds a comma.

    >>> rule_list(["Ebbinghaus, days", "MemoryBank"])
    'Ebbinghaus, days; and MemoryBank'
    >>> rule_list(["LRU", "FIFO", "LFU"])
    'LRU, FIFO and LFU'
    """
    names = family_list(families)
    if not any("," in family for family in families):
        return names
    return families[0] if len(families) == 1 else "; ".join(families[:-1]) + f"; and {families[-1]}"


def yourmemory_values(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """YourMemory on its active-day clock (its code's) against calendar days: the least share of
    turns held and the most updates ranked first, over its importances."""
    values = {}
    for key, family in (("active", "YourMemory"), ("calendar", "YourMemory, calendar days")):
        mine = [r for r in rows if r["family"] == family]
        values[f"ym_{key}_turns_min"] = min(float(r["turns_share"]) for r in mine)
        values[f"ym_{key}_first_max"] = max(float(r["update_current_first"]) for r in mine)
    return values


def chapter_results(
    prepared: Prepared, params: Mapping[str, Any], executor: Executor
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """Everything the chapter glues and shows: ``(values, tables)``."""
    from ...text.similarity import COSINE_DECIMALS

    values, dataset = dataset_rows(prepared)
    rows, _ = run_sweep(
        grid_of(params), prepared.histories, params["recall_k"], params["min_similarity"], params["question_k"],
        executor,
    )  # fmt: skip
    tables: dict[str, list[dict[str, Any]]] = {"dataset": dataset}
    tables["recommend"] = recommendation_rows(rows, params["floors"])
    tables["updates"] = [{key: row[key] for key in _SETTING + _UPDATES} for row in rows]
    tables["types"] = [{key: row[key] for key in _SETTING + _TYPES} for row in rows]
    values.update(sweep_values(rows, params["headline_floor"]))
    recommended = [r["rule"] for r in tables["recommend"] if r["rule"] not in ("Keep everything", "none")]
    # no old-information question (the S setting): no floor is reached, no rule is recommended
    values["recommend_rules"] = rule_list(list(dict.fromkeys(recommended))) if recommended else "none"
    values.update(yourmemory_values(rows))
    values["recommend_day_only"] = all(rule in DAY_FAMILIES for rule in recommended)
    values["cosine_decimals"] = COSINE_DECIMALS
    for name in ("recall_k", "min_similarity", "question_k", "eviction_threshold", "replicates"):
        values[name] = params[name]
    values["thresholds_text"] = ", ".join(f"{t:g}" for t in params["thresholds"])
    values["floors_text"] = ", ".join(f"{f:g}" for f in params["floors"])
    return values, tables
