"""forgetting.studies.text.tables: the rows of the chapter's tables."""

from __future__ import annotations

import numpy as np
import pytest

from forgetting.studies.text.tables import (
    evidence_by_query,
    hitchhiker_table,
    memory_similarity,
    role_order,
    taxonomy_counts,
    taxonomy_table,
)

pytest_plugins = ("text_fixtures",)


def test_summary_tables_are_consistent(corpus, vectors, default_run):
    rows = taxonomy_table(default_run)
    assert [r["memory"] for r in rows] == [corpus.memory_ids[i] for i in role_order(corpus)]
    counts = taxonomy_counts(default_run)
    assert all(sum(v for k, v in row.items() if k != "when") == len(corpus.memories) for row in counts)
    evidence = evidence_by_query(default_run, "stale-heroku")
    stale = corpus.index("stale-heroku")
    assert sum(r["episodes"] for r in evidence) == int(
        default_run.evidence()[stale] - default_run.evidence(default_run.last_before)[stale]
    )
    matrix, ids, roles = memory_similarity(corpus, vectors)
    assert matrix.shape == (len(ids), len(ids)) and np.allclose(np.diag(matrix), 1.0)
    assert roles == sorted(
        roles, key=["general", "specialist", "stale", "corrected", "hitchhiker", "unrelated"].index
    )
    hitchhikers = hitchhiker_table(default_run, vectors)
    assert {r["hitchhiker"] for r in hitchhikers} == set(corpus.ids_with_role("hitchhiker"))


@pytest.mark.parametrize("flag", ["no", 1, None])
def test_evidence_by_query_refuses_a_phase_flag_that_is_not_a_bool(flag):
    with pytest.raises(ValueError, match="after must be a bool"):
        evidence_by_query(None, "any memory", after=flag)  # refused before the run is read
