"""Real conversations: the LoCoMo benchmark data (Maharana et al., ACL 2024), checked and loaded.

Modules, in the order a reader meets them:

* :mod:`.source` -- where the zip comes from (a given path, ``$FORGETTING_LOCOMO``, the
  git-ignored cache, a download pinned to the upstream commit, the copy beside the project)
  and the checks every copy passes (:func:`locomo_zip`);
* :mod:`.locomo` -- the zip read in memory into conversations (:func:`load_locomo`);
* :mod:`.schema` -- the file format, checked field by field;
* :mod:`.user_file` -- a file of the reader's own in LoCoMo's layout (a ``.json`` as
  ``data/locomo10.json``, or a ``.zip`` of conversation files), checked and loaded
  (:func:`~.user_file.load_user_file`), for ``forgetting run real-conversations -p data PATH``;
* :mod:`.records` -- :class:`Conversation`, :class:`Turn`, :class:`Question`, evidence and counts;
* :mod:`.policies` -- forgetting on a conversation: its turns as an event stream
  (:func:`conversation_events`), :func:`replay` of a policy over it, keep-everything, Ebbinghaus
  decay on turns or days, the recency window;
* :mod:`.capacity` -- LRU, FIFO, LFU and seeded random eviction at a capacity;
* :mod:`.field_rules` -- the forgetting rules of MemoryBank and YourMemory, read from their code;
* :mod:`.embeddings` -- turns and questions embedded once in float64, cached, and their rounded
  cosines (:func:`~.embeddings.embed_conversations`), with the count of cosines a machine's
  last digits could move (:func:`~.embeddings.fragile_pairs`) and token counts;
* :mod:`.benchmark` -- one replay with recall by retrieval, scored at the end (evidence kept,
  hit@k over what is held and over the whole history, footprint);
* :mod:`.sweep` -- every policy over its range on every conversation, through the executor;
* :mod:`.prepared` -- the chapter's data, prepared once: the chosen conversations loaded,
  embedded and token-counted (:func:`~.prepared.prepare`), what both study modules read;
* :mod:`.study` -- the real-conversation chapter's computation in one call;
* :mod:`.presentation` -- how that chapter shows its tables and draws its families;
* :mod:`.question_retrieval` -- the questions as retrieval episodes over the whole store
  (:class:`QuestionSet` of precomputed rounded cosines, :func:`retrieve`, :func:`hits`) and
  what each turn did in them (:func:`turn_roles`: hitchhikers, distractors);
* :mod:`.question_worth` -- Memory Worth learned on part of each conversation's questions, its
  low-value turns suppressed on the held-out rest (:func:`held_out`, :func:`flag_report`).
* :mod:`.question_credit` -- each turn's exact effect on the questions that retrieve it
  (:func:`~.question_credit.turn_effects`) and randomized omission on the training questions,
  its flags and Memory Worth's suppressed on the held-out rest
  (:func:`~.question_credit.question_credit`);
* :mod:`.question_study` -- the chapter's question sections (Memory Worth held out, credit) in
  one call.

The data is never committed to the project (its repository states no licence); only results
computed from it are.
"""

from .capacity import Capacity, RandomEviction
from .field_rules import MemoryBank, YourMemory
from .locomo import load_locomo
from .policies import Ebbinghaus, Event, KeepAll, Replay, Window, conversation_events, replay
from .question_retrieval import (
    DEFAULT_CO_SHARE,
    DEFAULT_MIN_RETRIEVALS,
    QuestionSet,
    TurnRoles,
    hits,
    retrieve,
    turn_roles,
)
from .question_worth import (
    DEFAULT_TRAIN_SHARE,
    FlagReport,
    HeldOut,
    flag_low_value,
    flag_report,
    held_out,
    learn_worth,
    question_split,
)
from .records import CATEGORIES, Conversation, Counts, Evidence, Question, Turn, counts, resolve_evidence
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
    "DEFAULT_CO_SHARE",
    "DEFAULT_MIN_RETRIEVALS",
    "DEFAULT_TRAIN_SHARE",
    "LOCOMO_ENV",
    "LOCOMO_MEMBERS",
    "LOCOMO_SHA256",
    "LOCOMO_URL",
    "Capacity",
    "Conversation",
    "Counts",
    "DataUnavailable",
    "Ebbinghaus",
    "Event",
    "Evidence",
    "FlagReport",
    "HeldOut",
    "KeepAll",
    "MemoryBank",
    "Question",
    "QuestionSet",
    "RandomEviction",
    "Replay",
    "Turn",
    "TurnRoles",
    "Window",
    "YourMemory",
    "conversation_events",
    "counts",
    "flag_low_value",
    "flag_report",
    "held_out",
    "hits",
    "learn_worth",
    "load_locomo",
    "locomo_zip",
    "parse_session_time",
    "question_split",
    "replay",
    "resolve_evidence",
    "retrieve",
    "turn_roles",
    "verify_zip",
]
