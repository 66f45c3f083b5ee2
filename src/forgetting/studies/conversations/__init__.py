"""The real-conversation chapter's study: LoCoMo embedded, every rule swept, the questions.

Modules, in the order a reader meets them:

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
* :mod:`.readings` -- what the chapter reads off its own results: the rule to use at each
  footprint budget, which signal carries information, what the data's odd fields are;
* :mod:`.question_retrieval` -- the questions as retrieval episodes over the whole store
  (:class:`QuestionSet` of precomputed rounded cosines, :func:`retrieve`, :func:`hits`) and
  what each turn did in them (:func:`turn_roles`: hitchhikers, distractors);
* :mod:`.question_worth` -- Memory Worth learned on part of each conversation's questions, its
  low-value turns suppressed on the held-out rest (:func:`held_out`, :func:`flag_report`);
* :mod:`.question_credit` -- each turn's exact effect on the questions that retrieve it
  (:func:`~.question_credit.turn_effects`) and randomized omission on the training questions,
  its flags and Memory Worth's suppressed on the held-out rest
  (:func:`~.question_credit.question_credit`);
* :mod:`.question_study` -- the chapter's question sections (Memory Worth held out, credit) in
  one call.

The rules it replays and the data it loads are the library's, :mod:`forgetting.conversations`.
"""

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

__all__ = [
    "DEFAULT_CO_SHARE",
    "DEFAULT_MIN_RETRIEVALS",
    "DEFAULT_TRAIN_SHARE",
    "FlagReport",
    "HeldOut",
    "QuestionSet",
    "TurnRoles",
    "flag_low_value",
    "flag_report",
    "held_out",
    "hits",
    "learn_worth",
    "question_split",
    "retrieve",
    "turn_roles",
]
