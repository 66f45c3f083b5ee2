"""Causal credit on Experiment 5's real text (``forgetting.studies.text.credit``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from forgetting.studies.text import credit, exp5
from forgetting.studies.text.corpus import AFTER, BEFORE, PHASES
from forgetting.studies.text.outcome import OutcomeModel
from forgetting.studies.text.retrieval import retrieve, set_outcome
from forgetting.studies.worlds.credit import omission_slots

pytest_plugins = ("text_fixtures",)


def _direct_probability(corpus, phase, query, memories, outcome):
    """The outcome model read straight from the corpus: needed share, and the misleading rule."""
    task = corpus.queries[query]
    ids = [corpus.memory_ids[m] for m in memories]
    fraction = len(set(task.needs[phase]) & set(ids)) / len(task.needs[phase])
    wrong = {m.id for m in corpus.memories if not m.true_in(phase)}
    if outcome.stale_misleads_any_task:
        misled = any(i in wrong for i in ids)
    else:
        bearing = [i for i in ids if i in set(task.needed_ever())]
        misled = bool(bearing) and bearing[0] in wrong
    return outcome.p_stale if misled else outcome.p_none + (outcome.p_all - outcome.p_none) * fraction


@pytest.mark.parametrize("any_task", [True, False])
def test_withheld_probabilities_read_the_outcome_model_directly(corpus, vectors, any_task):
    outcome = OutcomeModel(stale_misleads_any_task=any_task)
    for phase in PHASES:
        retrieval = retrieve(corpus, vectors, phase, 3, outcome)
        table = credit.withheld_probabilities(corpus, retrieval, outcome)
        for q in range(len(corpus.queries)):
            full = [int(m) for m in retrieval.top[q]]
            assert retrieval.p_success[q] == pytest.approx(
                _direct_probability(corpus, phase, q, full, outcome)
            )
            for slot in range(3):
                rest = full[:slot] + full[slot + 1 :]
                assert table[q, slot] == pytest.approx(_direct_probability(corpus, phase, q, rest, outcome))


def test_an_empty_set_needs_nothing_and_misleads_nobody(corpus):
    assert set_outcome(corpus, AFTER, 0, []) == (0.0, False)


def test_exact_effects_are_the_mean_drop_over_the_episodes_that_retrieve_a_memory(
    corpus, vectors, default_run
):
    world = default_run.world
    for phase in PHASES:
        retrieval = default_run.retrieval[phase]
        table = credit.withheld_probabilities(corpus, retrieval, world.outcome)
        effect, rate = credit.exact_effects(corpus, retrieval, table, default_run.type_weights[phase])
        prob = exp5.query_probabilities(corpus, default_run.type_weights[phase])
        _, p_rate = exp5.exact_p_plus(corpus, retrieval, default_run.type_weights[phase])
        np.testing.assert_allclose(rate, p_rate, rtol=0, atol=1e-15)
        for m in range(len(corpus.memories)):
            rows, slots = np.nonzero(retrieval.top == m)
            weights = prob[rows]
            if weights.sum() == 0:
                assert np.isnan(effect[m])
                continue
            drop = retrieval.p_success[rows] - table[rows, slots]
            assert effect[m] == pytest.approx(float((weights * drop).sum() / weights.sum()), abs=1e-12)
    stale = corpus.index("stale-heroku")
    after = credit.exact_effects(
        corpus,
        default_run.retrieval[AFTER],
        credit.withheld_probabilities(corpus, default_run.retrieval[AFTER], world.outcome),
        default_run.type_weights[AFTER],
    )[0]
    assert after[stale] < 0, "the stale memory no longer hurts after the shift"
    hitchhikers = np.flatnonzero((corpus.roles == "hitchhiker") & ~np.isnan(after))
    assert hitchhikers.size and np.all(after[hitchhikers] == 0.0), "withholding a hitchhiker changes nothing"


def test_the_omission_effect_is_centred_on_the_exact_effect(corpus, vectors):
    """Unbiasedness, numerically: a long run at epsilon = 0.5, every memory within 4.5 standard
    errors of its exact post-shift effect."""
    world = exp5.RealTextWorld(n_episodes=40000, shift_episode=1000)
    run = credit.omission_run(corpus, vectors, world, 0.5)
    table = credit.withheld_probabilities(corpus, run.run.retrieval[AFTER], world.outcome)
    exact, _ = credit.exact_effects(corpus, run.run.retrieval[AFTER], table, run.run.type_weights[AFTER])
    from forgetting.worth.causal import omission_effects

    rows = run.run.after
    estimate = omission_effects(
        run.run.retrieved[rows], run.slots[rows], run.success[rows], len(corpus.memories)
    )
    scored = ~np.isnan(exact) & (estimate.withheld > 100) & (estimate.se > 0)
    assert scored.sum() >= 15
    z = (estimate.effect[scored] - exact[scored]) / estimate.se[scored]
    assert np.abs(z).max() < 4.5, z


def test_no_omission_is_experiment_5s_own_run_and_rates_nest(corpus, vectors, default_run):
    plain = credit.omission_run(corpus, vectors, default_run.world, 0.0)
    assert np.array_equal(plain.success, default_run.success)
    assert np.array_equal(plain.p_success, default_run.p_success)
    low = credit.omission_run(corpus, vectors, default_run.world, 0.1)
    high = credit.omission_run(corpus, vectors, default_run.world, 0.4)
    assert np.all(high.slots[low.slots >= 0] == low.slots[low.slots >= 0]), "omissions do not nest"
    assert np.array_equal(low.slots, omission_slots(0, default_run.n_episodes, 3, 0.1))
    untouched = low.slots < 0
    assert np.array_equal(low.success[untouched], default_run.success[untouched])


def test_text_credit_at_no_omission_is_the_papers_memory_worth(corpus, vectors, default_run):
    result = credit.text_credit(corpus, vectors, default_run.world, [0.0, 0.3], 2)
    stale = corpus.index("stale-heroku")
    assert result.stale_value["worth_cumulative"][0, 0] == default_run.worth()[stale]
    second = exp5.run_episodes(corpus, vectors, replace(default_run.world, seed=1))
    assert result.stale_value["worth_cumulative"][1, 0] == second.worth()[stale]
    assert np.isnan(result.rho["omission"][:, :, 0]).all(), "an omission effect without omission"
    assert not np.isnan(result.rho["omission"][:, :, 1]).any()
    assert np.all(result.success_lost[:, 0] == 0) and np.all(result.success_lost[:, 1] > 0)
    rows = credit.text_credit_rows(result)
    assert len(rows) == 2 * (len(credit.TEXT_ESTIMATORS) * 2 - 1)
    assert {r["phase"] for r in rows} == {BEFORE, AFTER}


def test_the_memories_always_beside_the_stale_one_are_only_retrieved_with_it(corpus, default_run):
    stale = corpus.index("stale-heroku")
    retrieval, weights = default_run.retrieval[AFTER], default_run.type_weights[AFTER]
    beside = credit.always_beside(corpus, retrieval, weights, stale)
    assert corpus.index("spec-release") in beside
    live = retrieval.top[exp5.query_probabilities(corpus, weights) > 0]
    for m in beside:
        assert np.all((live == stale).any(axis=1)[(live == m).any(axis=1)])
    others = set(np.unique(live).tolist()) - set(beside) - {stale}
    for m in others:
        assert not np.all((live == stale).any(axis=1)[(live == m).any(axis=1)])


@pytest.mark.parametrize(
    "epsilons, n_seeds, match",
    [([0.0], 1, "n_seeds"), ([], 2, "epsilons"), ((0.1, 1.5), 2, r"epsilons\[1\]"), ("0.1", 2, "epsilons")],
)
def test_bad_settings_are_refused_before_any_run(corpus, vectors, epsilons, n_seeds, match):
    with pytest.raises(ValueError, match=match):
        credit.text_credit(corpus, vectors, exp5.RealTextWorld(), epsilons, n_seeds)


def test_a_bad_rate_is_refused(corpus, vectors):
    with pytest.raises(ValueError, match="epsilon"):
        credit.omission_run(corpus, vectors, exp5.RealTextWorld(), -0.1)


def test_text_findings_read_the_rows_and_name_their_rates(corpus, vectors, default_run):
    """The chapter's numbers on the real text come from the rows of the same run: the first rate
    above zero is ``*_first``, the last ``*_last``, and a run that does not start at no omission
    is refused rather than read at the wrong rate."""
    result = credit.text_credit(corpus, vectors, default_run.world, [0.0, 0.2, 0.4], 2)
    findings = credit.text_findings(corpus, vectors, default_run.world, result)
    v, rows = findings.values, credit.text_credit_rows(result)
    cell = {(r["phase"], r["epsilon"], r["estimator"]): r for r in rows}
    assert findings.cell == cell
    label = credit.TEXT_ESTIMATORS
    assert v["text_after_omission_last"] == cell[AFTER, 0.4, label["omission"]]["rho_mean"]
    assert v["text_before_regression_first"] == cell[BEFORE, 0.2, label["regression"]]["rho_mean"]
    assert v["text_after_worth_none"] == cell[AFTER, 0.0, label["worth_phase"]]["rho_mean"]
    assert (v["text_first_rate"], v["text_second_rate"], v["text_last_rate"]) == (0.2, 0.4, 0.4)
    assert v["stale_effect_after"] == result.effects[AFTER][corpus.index("stale-heroku")]
    assert v["text_seeds"] == 2 and v["text_lost_last"] == result.success_lost[:, -1].mean()
    seen = int((~np.isnan(result.effects[AFTER])).sum())
    assert v["text_seen_after"] == seen and v["text_chance_sd"] == 1 / np.sqrt(seen - 1)
    above = v["text_omission_above_from"]
    assert np.isnan(above) or above in (0.2, 0.4)
    claims = credit.text_claims(findings)
    assert claims and all(isinstance(holds, bool) for holds in claims.values())
    assert claims["the omission effect has no value without omission"]
    with pytest.raises(ValueError, match="start at 0"):
        credit.text_findings(
            corpus, vectors, default_run.world, replace(result, epsilons=np.array([0.1, 0.2, 0.4]))
        )
