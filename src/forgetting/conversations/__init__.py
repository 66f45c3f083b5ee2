"""Conversations as event streams, the forgetting rules replayed over them, and LoCoMo's data.

Modules, in the order a reader meets them:

* :mod:`.policies` -- the event (:class:`Event`), the policy protocol (:class:`~.policies.Policy`), the one
  replay driver (:func:`replay`), keep-everything, Ebbinghaus decay on turns or days, the recency
  window, and a conversation's turns as an event stream (:func:`conversation_events`);
* :mod:`.capacity` -- LRU, FIFO, LFU and seeded random eviction at a capacity;
* :mod:`.field_rules` -- the forgetting rules of MemoryBank (at two commits) and YourMemory (its
  calendar and active-day clocks), read from their code;
* :mod:`.source` -- where the LoCoMo zip comes from (a given path, ``$FORGETTING_LOCOMO``, the
  git-ignored cache, a download pinned to the upstream commit, the copy beside the project)
  and the checks every copy passes (:func:`locomo_zip`);
* :mod:`.locomo` -- the zip read in memory into conversations (:func:`load_locomo`);
* :mod:`.schema` -- the file format, checked field by field;
* :mod:`.user_file` -- a file of the reader's own in LoCoMo's layout (a ``.json`` as
  ``data/locomo10.json``, or a ``.zip`` of conversation files), checked and loaded
  (:func:`~.user_file.load_user_file`), for ``forgetting run real-conversations -p data PATH``;
* :mod:`.records` -- :class:`Conversation`, :class:`Turn`, :class:`Question`, evidence and counts;
* :mod:`.longmemeval_source` -- where LongMemEval's per-question files come from (a given zip or
  folder, ``$FORGETTING_LONGMEMEVAL``, the git-ignored cache, downloads pinned to the upstream
  commit, the zip beside the project), each checked against the committed manifest
  (:func:`longmemeval_copy`);
* :mod:`.longmemeval` -- its questions checked and parsed (:func:`load_longmemeval`) into
  :class:`LmeQuestion`, :class:`LmeSession`, :class:`LmeTurn` (sessions in date order), counted
  (:func:`lme_counts`) and turned into replay events (:func:`question_events`).

The real-conversation chapter's study (embeddings, the benchmark, sweeps, questions) is in
:mod:`forgetting.studies.conversations`. The data is never committed to the project (its
repository states no licence); only results computed from it are.
"""

from .capacity import Capacity, CapacityRule, RandomEviction
from .field_rules import (
    MemoryBank,
    MemoryBankCode,
    PassTime,
    YourMemory,
    YourMemoryClock,
    yourmemory_reinforced,
)
from .locomo import load_locomo
from .longmemeval import (
    LmeCounts,
    LmeQuestion,
    LmeSession,
    LmeTurn,
    QuestionType,
    Role,
    lme_counts,
    load_longmemeval,
    parse_lme_date,
    question_events,
)
from .longmemeval_source import LME_ENV, longmemeval_copy
from .policies import (
    DecayClock,
    Ebbinghaus,
    Event,
    KeepAll,
    Replay,
    ReplayOrder,
    ReplayRun,
    Window,
    conversation_events,
    replay,
)
from .records import (
    CATEGORIES,
    Conversation,
    Counts,
    Evidence,
    Question,
    Repair,
    Turn,
    counts,
    evidence_repairs,
    repaired_reference,
    resolve_evidence,
)
from .schema import parse_session_time
from .source import (
    CACHE_DIR,
    LOCOMO_ENV,
    LOCOMO_MEMBERS,
    LOCOMO_SHA256,
    LOCOMO_URL,
    DataUnavailable,
    locomo_zip,
    verify_zip,
)

__all__ = [
    "CACHE_DIR",
    "CATEGORIES",
    "LME_ENV",
    "LOCOMO_ENV",
    "LOCOMO_MEMBERS",
    "LOCOMO_SHA256",
    "LOCOMO_URL",
    "Capacity",
    "CapacityRule",
    "Conversation",
    "Counts",
    "DataUnavailable",
    "DecayClock",
    "Ebbinghaus",
    "Event",
    "Evidence",
    "KeepAll",
    "LmeCounts",
    "LmeQuestion",
    "LmeSession",
    "LmeTurn",
    "MemoryBank",
    "MemoryBankCode",
    "PassTime",
    "Question",
    "QuestionType",
    "RandomEviction",
    "Replay",
    "ReplayOrder",
    "ReplayRun",
    "Role",
    "Turn",
    "Window",
    "YourMemory",
    "YourMemoryClock",
    "conversation_events",
    "counts",
    "lme_counts",
    "load_locomo",
    "load_longmemeval",
    "locomo_zip",
    "longmemeval_copy",
    "parse_lme_date",
    "parse_session_time",
    "question_events",
    "replay",
    "Repair",
    "evidence_repairs",
    "repaired_reference",
    "resolve_evidence",
    "verify_zip",
    "yourmemory_reinforced",
]
