"""forgetting.studies.text.outcome: the success probability of an episode."""

from __future__ import annotations

import numpy as np
import pytest

from forgetting.studies.text.corpus import AFTER
from forgetting.studies.text.outcome import OutcomeModel
from forgetting.studies.text.retrieval import retrieve

pytest_plugins = ("text_fixtures",)


def test_outcome_rules(corpus, vectors):
    stale = corpus.index("stale-heroku")
    broad = retrieve(corpus, vectors, AFTER, 3, OutcomeModel())
    narrow = retrieve(corpus, vectors, AFTER, 3, OutcomeModel(stale_misleads_any_task=False))
    with_stale = np.any(broad.top == stale, axis=1)
    assert with_stale.any()
    # broad rule: misled exactly when the stale memory is retrieved, success probability p_stale
    assert np.array_equal(broad.misled, with_stale)
    assert np.all(broad.p_success[with_stale] == OutcomeModel().p_stale)
    # narrow rule: only tasks the stale memory bears on can be misled
    bears = np.array(["stale-heroku" in q.needed_ever() for q in corpus.queries])
    assert not np.any(narrow.misled & ~bears)
    assert np.any(with_stale & ~bears)
    # without a misleading memory: p_none + (p_all - p_none) * fraction of needs retrieved
    model = OutcomeModel()
    clean = ~broad.misled
    assert np.allclose(
        broad.p_success[clean], model.p_none + (model.p_all - model.p_none) * broad.fraction_needed[clean]
    )


@pytest.mark.parametrize(
    "kwargs",
    [dict(p_all=1.5), dict(p_stale=-0.1), dict(p_none=float("nan")), dict(stale_misleads_any_task=1)],
)
def test_bad_outcome_settings_are_rejected(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        OutcomeModel(**kwargs)


def test_the_misled_rule_in_words_names_the_rule():
    assert "whenever a memory that is wrong" in OutcomeModel().misled_rule
    assert "highest-ranked" in OutcomeModel(stale_misleads_any_task=False).misled_rule
