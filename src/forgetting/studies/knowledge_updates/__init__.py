"""The knowledge-update chapter: LongMemEval's histories replayed through the forgetting rules.

:mod:`.histories` (what is stored and embedded, what scores), :mod:`.supersede` (a contradiction
rule of the field's kind without an LLM), :mod:`.replays` (one history, one rule, scored),
:mod:`.sweep` (every rule over its range), :mod:`.study` (the chapter's computation in one call).
"""
