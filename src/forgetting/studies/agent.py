"""The use-agent chapter: a simulated agent for :class:`~forgetting.GovernedMemory`, and every
forgetting rule replayed over a conversation file the reader names.

* :class:`DeploymentWorld` -- a small seeded world for an agent loop: what the user tells the
  agent at each turn (:meth:`DeploymentWorld.told`), the task of each turn
  (:meth:`DeploymentWorld.task`) and whether it succeeds with the memory the agent acted on
  (:meth:`DeploymentWorld.succeeds`). At ``change_turn`` the deployment endpoint changes: the old
  fact is stale from then on, and a task that acts on it fails.
* :func:`load_conversations` -- the example conversation or a file of the reader's own in the
  layout of LoCoMo's released ``locomo10.json``, read by the library's
  :func:`~forgetting.conversations.user_file.load_user_file` (the reader of
  ``forgetting run real-conversations -p data PATH`` too).
* :func:`overlap_rankings` -- a retriever without a model: before turn ``i`` is stored, the
  earlier turns that share at least ``min_overlap`` content words with it, most shared first.
* :func:`rule_rows` -- what each rule held at the end, its missed recalls and the evidence of
  the file's questions it kept.

Time is the integer turn; every draw of the world comes from the turn's own generator
(:func:`~forgetting.studies.worlds.model.substream` of ``seed``, child ``turn``), so a run
resumed at any turn draws what an uninterrupted run draws there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from .._validate import int_problem, raise_problems, real_problem, seed_problem, shown
from ..conversations.policies import Event, Replay
from ..conversations.records import Conversation, resolve_evidence
from ..conversations.user_file import load_user_file
from .worlds.model import substream

__all__ = [
    "DEPLOY",
    "FACTS",
    "STATUS",
    "STOPWORDS",
    "DeploymentWorld",
    "Task",
    "content_words",
    "LOG_IDS",
    "RULE_STYLES",
    "held_spans",
    "load_conversations",
    "memory_rows",
    "overlap_rankings",
    "recall_count",
    "rule_rows",
    "turn_rows",
]

DEPLOY, STATUS = "deploy", "status"
"""The two tasks of :class:`DeploymentWorld`; each is also the word its search looks for."""

#: Each fact of :class:`DeploymentWorld`: its id and text. ``endpoint-v2`` is told at the
#: world's ``change_turn``, the others at turn 1.
FACTS = {
    "endpoint-v1": "deploy: POST https://deploy.example.com/v1/releases",
    "runbook": "status: read https://status.example.com before answering",
    "offsite": "the team offsite is in Lisbon in March",
    "endpoint-v2": "deploy: POST https://deploy.example.com/v2/releases (v1 is switched off)",
}

_COMMON_WORDS = (
    "about after again also and any are been before being but can could did does doing for from "
    "had has have her here hers him his how its just more most not now off once only our out over "
    "she should some such than that the their them then there these they this those too under "
    "until very was were what when where which while who whom why will with would yes you your "
    "yours yourself"
)
#: Words that say little about what a turn is about: they never count as shared.
STOPWORDS = frozenset(_COMMON_WORDS.split())
_WORD = re.compile(r"[a-z0-9]+")


class Task(NamedTuple):
    """A turn's task: its turn, its topic (:data:`DEPLOY` or :data:`STATUS`) and whether it fails
    whatever the agent knew (a flaky failure)."""

    turn: int
    topic: str
    flaky: bool


@dataclass(frozen=True)
class DeploymentWorld:
    """A deployment agent's world: three facts at turn 1, the new endpoint at ``change_turn``.

    Each turn draws two uniforms ``u`` from its own generator (child ``turn`` of ``seed``): the
    turn has a :data:`DEPLOY` task if ``u[0] < deploy_rate``, else a :data:`STATUS` task if
    ``u[0] < deploy_rate + status_rate``, else none; the task is flaky if ``u[1] < flaky_rate``.
    A task succeeds when the agent acted on the current fact of its topic (``endpoint-v1`` before
    ``change_turn``, ``endpoint-v2`` from it; ``runbook``) and it is not flaky. ``offsite`` is
    never needed.

    Attributes
    ----------
    seed : int
        An int ``>= 0``.
    change_turn : int, default 10
        The turn the endpoint changes and ``endpoint-v2`` is told, ``>= 2``.
    deploy_rate, status_rate : float, default 0.5 and 0.2
        Chances of each task per turn, each in [0, 1], summing to at most 1.
    flaky_rate : float, default 0.1
        Chance that a task fails whatever the agent knew, in [0, 1].
    """

    seed: int
    change_turn: int = 10
    deploy_rate: float = 0.5
    status_rate: float = 0.2
    flaky_rate: float = 0.1

    def __post_init__(self) -> None:
        problems = [
            seed_problem("seed", self.seed),
            int_problem("change_turn", self.change_turn, minimum=2),
            real_problem("deploy_rate", self.deploy_rate, 0.0, 1.0),
            real_problem("status_rate", self.status_rate, 0.0, 1.0),
            real_problem("flaky_rate", self.flaky_rate, 0.0, 1.0),
        ]
        if not any(problems) and self.deploy_rate + self.status_rate > 1.0:
            problems.append(
                f"deploy_rate + status_rate must be at most 1, got {self.deploy_rate!r} + {self.status_rate!r}"
            )
        raise_problems(problems)

    def _turn_problem(self, turn: object) -> None:
        raise_problems([int_problem("turn", turn, minimum=1)])

    def told(self, turn: int) -> list[tuple[str, str]]:
        """The facts the user tells the agent at ``turn`` (an int ``>= 1``): ``(id, text)`` pairs."""
        self._turn_problem(turn)
        ids = ["endpoint-v1", "runbook", "offsite"] if turn == 1 else []
        ids += ["endpoint-v2"] if turn == self.change_turn else []
        return [(fact, FACTS[fact]) for fact in ids]

    def task(self, turn: int) -> Task | None:
        """The task of ``turn`` (an int ``>= 1``), ``None`` for a turn without one."""
        self._turn_problem(turn)
        u = substream(int(self.seed), int(turn)).random(2)
        flaky = bool(u[1] < self.flaky_rate)
        if u[0] < self.deploy_rate:
            return Task(int(turn), DEPLOY, flaky)
        if u[0] < self.deploy_rate + self.status_rate:
            return Task(int(turn), STATUS, flaky)
        return None

    def current(self, topic: str, turn: int) -> str:
        """The id of the fact a ``topic`` task needs at ``turn``."""
        if topic == STATUS:
            return "runbook"
        if topic == DEPLOY:
            return "endpoint-v1" if turn < self.change_turn else "endpoint-v2"
        raise ValueError(f"topic must be {DEPLOY!r} or {STATUS!r}, got {shown(topic)}")

    def succeeds(self, task: Task, used: Sequence[Any]) -> bool:
        """Whether ``task`` succeeds when the agent acted on ``used`` (its first id; none: it
        knew nothing): the first id is the current fact and the task is not flaky."""
        return bool(used) and used[0] == self.current(task.topic, task.turn) and not task.flaky


#: The lists of ids of an agent log's row (:func:`turn_rows`), in the order a turn fills them.
LOG_IDS = ("told", "used", "deprecated", "evicted", "held")


def turn_rows(log: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """An agent log as a table: each row's lists of ids (:data:`LOG_IDS`) as text, ids separated
    by spaces; the task ``None`` as ``""`` and the outcome of a turn without one as ``""``."""
    return [
        {
            "turn": row["turn"],
            "task": row["task"] or "",
            "success": "" if row["success"] is None else row["success"],
            **{field: " ".join(map(str, row[field])) for field in LOG_IDS},
        }
        for row in log
    ]


def held_spans(log: Sequence[Mapping[str, Any]]) -> dict[str, list[tuple[int, int]]]:
    """Each memory's turns held, as ``(first, last)`` runs, from a log whose rows have ``turn``
    and ``held`` (the ids held at the end of that turn), in order of first appearance."""
    spans: dict[str, list[tuple[int, int]]] = {}
    previous: set[str] = set()
    for row in log:
        turn = int(row["turn"])
        for mem_id in row["held"]:
            runs = spans.setdefault(mem_id, [])
            if mem_id in previous:
                runs[-1] = (runs[-1][0], turn)
            else:
                runs.append((turn, turn))
        previous = set(row["held"])
    return spans


def memory_rows(memory: Any, log: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per memory a :class:`~forgetting.GovernedMemory` was told in a run whose ``log``
    rows have ``turn`` and the lists ``told``, ``evicted`` and ``deprecated``: its id, the turn it
    was stored, where it is at the end, the first turns it was deprecated and evicted (``None``: never),
    its counters, its Memory Worth and its class."""
    first: dict[str, dict[str, int]] = {}
    for row in log:
        for field in ("told", "evicted", "deprecated"):
            for mem_id in row[field]:
                first.setdefault(mem_id, {}).setdefault(field, int(row["turn"]))
    rows = []
    for mem_id, turns in first.items():
        positive, negative = memory.counters(mem_id)
        rows.append(
            {
                "memory": mem_id,
                "stored_at": turns["told"],
                "status": str(memory.status(mem_id)),
                "deprecated_at": turns.get("deprecated"),
                "evicted_at": turns.get("evicted"),
                "successes": int(positive),
                "failures": int(negative),
                "worth": memory.worth(mem_id),
                "class": memory.worth_class(mem_id),
            }
        )
    return rows


# --- a conversation file ------------------------------------------------------------------------


EXAMPLE = "example"
"""The chapter's ``conversation`` at its default: the example file, :data:`EXAMPLE_FILE`."""
EXAMPLE_FILE = "data/examples/agent-conversation.json"
"""The example conversation (invented text in LoCoMo's layout), from the project's root."""


def load_conversations(root: str | Path, conversation: str) -> list[Conversation]:
    """The conversations of ``conversation``: :data:`EXAMPLE` (the example file under ``root``)
    or the path of a file of the reader's own, read and checked by
    :func:`~forgetting.conversations.user_file.load_user_file` (a ``.json`` laid out as LoCoMo's
    ``data/locomo10.json``, or a ``.zip`` of conversation files)."""
    return load_user_file(Path(root) / EXAMPLE_FILE if conversation == EXAMPLE else Path(conversation))


# --- recall by shared words ---------------------------------------------------------------------


def content_words(text: str) -> frozenset[str]:
    """The distinct words of ``text`` a retriever compares: lower-case runs of letters and digits
    of at least three characters, not in :data:`STOPWORDS`.

    >>> sorted(content_words("The knee held up the whole race; the knee!"))
    ['held', 'knee', 'race', 'whole']
    """
    return frozenset(w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in STOPWORDS)


def overlap_rankings(conversation: Conversation, min_overlap: int = 2) -> list[tuple[str, ...]]:
    """Before each turn is stored, the earlier turns a retriever names: every earlier turn that
    shares at least ``min_overlap`` of its :func:`content_words` (of ``memory_text``), the most
    shared first, then the most recent first; one ``dia_id`` tuple per turn (the first is empty).

    As :func:`forgetting.conversations.replay`'s ``k`` reads it, a ranking: a top-``k`` retriever
    recalls its first ``k`` ids that are still held.
    """
    raise_problems([int_problem("min_overlap", min_overlap, minimum=1)])
    words = [content_words(turn.memory_text) for turn in conversation.turns]
    rankings = []
    for i, mine in enumerate(words):
        shared = [(len(mine & words[j]), j) for j in range(i)]
        ranked = sorted((n, j) for n, j in shared if n >= min_overlap)[::-1]  # most shared, then latest
        rankings.append(tuple(conversation.turns[j].dia_id for _, j in ranked))
    return rankings


def recall_count(events: Sequence[Event], k: int) -> int:
    """The recalls a top-``k`` retriever over the whole history makes: ``min(k, len(ranking))``
    summed over the events (what :class:`~forgetting.conversations.Replay`'s ``missed_recalls``
    counts against)."""
    raise_problems([int_problem("k", k, minimum=1)])
    return sum(min(k, len(event.recalled)) for event in events)


def rule_rows(
    conversations: Sequence[Conversation], runs: Mapping[str, Sequence[Replay]]
) -> list[dict[str, Any]]:
    """One row per rule of ``runs`` (key: its replays, one per conversation, in order), summed
    over the conversations: the rule's label, the turns held at the end and their share of all
    turns, the missed recalls, and the share of the questions' evidence turns held at the end
    (every turn the evidence names, malformed references repaired as the real-conversation
    chapter repairs them: :func:`~forgetting.conversations.resolve_evidence` with ``repair=True``;
    ``nan`` when the questions name none)."""
    turns = sum(len(c.turns) for c in conversations)
    evidence = [
        [turn.dia_id for q in c.questions for turn in resolve_evidence(c, q, repair=True).turns]
        for c in conversations
    ]
    n_evidence = sum(len(ids) for ids in evidence)
    rows = []
    for key, replays in runs.items():
        if len(replays) != len(conversations):
            raise ValueError(
                f"runs[{key!r}] must hold one replay per conversation ({len(conversations)}), got {len(replays)}"
            )
        held = sum(len(r.held) for r in replays)
        kept = sum(sum(i in set(r.held) for i in ids) for r, ids in zip(replays, evidence))
        rows.append(
            {
                "rule": replays[0].policy,
                "turns_held": held,
                "share_held": held / turns,
                "missed_recalls": sum(r.missed_recalls for r in replays),
                "evidence_held": kept / n_evidence if n_evidence else float("nan"),
            }
        )
    return rows


#: How the chapter draws each rule (keys as the chapter names them): one colour per rule, and
#: the rules that would otherwise coincide (the capacity rules, pinned at ``C``) told apart by
#: line style and marker.
RULE_STYLES: dict[str, dict[str, Any]] = {
    "keep_all": {"color": "#7f7f7f", "linestyle": "-"},
    "decay_turns": {"color": "#1f77b4", "linestyle": "-"},
    "decay_days": {"color": "#17becf", "linestyle": "--"},
    "window": {"color": "#d62728", "linestyle": "-"},
    "lru": {"color": "#ff7f0e", "linestyle": "-", "marker": "o", "markevery": 4},
    "fifo": {"color": "#8c564b", "linestyle": "--", "marker": "s", "markevery": (1, 4)},
    "lfu": {"color": "#2ca02c", "linestyle": "-.", "marker": "^", "markevery": (2, 4)},
    "random": {"color": "#000000", "linestyle": ":", "marker": "x", "markevery": (3, 4)},
    "memorybank": {"color": "#9467bd", "linestyle": "-"},
    "yourmemory": {"color": "#e377c2", "linestyle": "--"},
}
