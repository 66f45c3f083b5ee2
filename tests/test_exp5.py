"""forgetting.studies.text.exp5: the episodes, determinism, the shift, and the counters."""

from __future__ import annotations

import numpy as np
import pytest

from forgetting.studies.text.corpus import BEFORE, PHASES
from forgetting.studies.text.exp5 import RealTextWorld, discounted_worth, run_episodes
from forgetting.studies.text.outcome import OutcomeModel
from forgetting.studies.text.retrieval import CorpusEmbeddings
from forgetting.studies.text.summary import summarise
from forgetting.worth import DiscountedMemoryWorth, MemoryWorth

pytest_plugins = ("text_fixtures",)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(n_episodes=1),
        dict(shift_episode=0),
        dict(shift_episode=3000),
        dict(k=0),
        dict(seed=-1),
        dict(type_weights_after=(0.0, 0.0)),
    ],
)
def test_bad_world_settings_are_rejected(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        RealTextWorld(**kwargs)


def test_same_seed_gives_identical_trajectories(corpus, vectors, default_run):
    again = run_episodes(corpus, vectors, RealTextWorld())
    assert np.array_equal(again.trajectory, default_run.trajectory)
    assert np.array_equal(again.retrieved, default_run.retrieved)
    assert np.array_equal(again.success, default_run.success)
    other = run_episodes(corpus, vectors, RealTextWorld(seed=1))
    assert not np.array_equal(other.success, default_run.success)


def test_stale_memory_loses_worth_after_the_shift(default_run):
    summary = summarise(default_run)
    assert summary["stale_class_before"] == "high-value"
    assert summary["stale_mw_before"] > 0.7
    assert summary["stale_mw_after"] < summary["stale_mw_before"] - 0.3
    # under the default outcome rule every post-shift retrieval of the stale memory is misled
    assert summary["stale_p_plus_after"] == pytest.approx(OutcomeModel().p_stale)
    assert abs(summary["stale_mw_after"] - summary["stale_expected_after"]) < 0.05
    # the discounted estimator forgets the pre-shift evidence and goes low
    stale = default_run.corpus.index("stale-heroku")
    assert discounted_worth(default_run, 0.99)[-1, stale] < 0.2


def test_counters_match_the_scalar_estimator(corpus, vectors):
    run = run_episodes(corpus, vectors, RealTextWorld(n_episodes=400, shift_episode=200))
    scalar = MemoryWorth()
    discounted = DiscountedMemoryWorth(discount=0.95)
    ids = corpus.memory_ids
    for row, success in zip(run.retrieved, run.success):
        scalar.update([ids[i] for i in row], bool(success))
        discounted.update([ids[i] for i in row], bool(success))
    fast = discounted_worth(run, 0.95)[-1]
    for i, memory in enumerate(ids):
        assert scalar.counters(memory) == (run.successes[-1, i], run.failures[-1, i])
        assert scalar.worth(memory) == run.worth()[i]
        assert fast[i] == pytest.approx(discounted.worth(memory), abs=1e-12)


def test_task_mix_override(corpus, vectors):
    same = RealTextWorld(type_weights_after=tuple(corpus.type_weights(BEFORE)))
    run = run_episodes(corpus, vectors, same)
    deploy = [t.id for t in corpus.types].index("deploy")
    assert np.mean(run.task_type[run.after] == deploy) < 0.2
    with pytest.raises(ValueError, match="type_weights_after has 2 weights"):
        run_episodes(corpus, vectors, RealTextWorld(type_weights_after=(1.0, 1.0)))


def _blank_vectors(corpus):
    """Vectors that are never read: every check below comes before any retrieval."""
    zeros = np.zeros((1, 384), dtype=np.float32)
    return CorpusEmbeddings(zeros, zeros, "0" * 64, 0, 0)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(outcome="broad"), "outcome"),
        (dict(high_threshold=1.5), "high_threshold"),
        (dict(low_threshold=0.8), "low_threshold"),
        (dict(min_evidence=float("nan")), "min_evidence"),
        (dict(k=True), "k"),
    ],
)
def test_bad_world_taxonomy_and_outcome_are_rejected(kwargs, name):
    with pytest.raises(ValueError, match=f"{name} must be"):
        RealTextWorld(**kwargs)


def test_a_world_retrieving_more_than_a_store_holds_is_refused_before_any_retrieval(corpus):
    stores = {phase: int(corpus.available(phase).sum()) for phase in PHASES}
    world = RealTextWorld(k=max(stores.values()) + 1)  # a world is built before its corpus is known
    with pytest.raises(
        ValueError, match=r"k must be an int >= 1 and <= \d+ \(the memories in the store"
    ) as error:
        run_episodes(corpus, _blank_vectors(corpus), world)
    assert all(f"in phase {phase!r}" in str(error.value) for phase in PHASES)
    with pytest.raises(ValueError, match="type_weights_after has 1 weights"):
        run_episodes(corpus, _blank_vectors(corpus), RealTextWorld(type_weights_after=(1.0,)))
    with pytest.raises(ValueError, match="world must be a RealTextWorld"):
        run_episodes(corpus, _blank_vectors(corpus), {"k": 3})


def test_variants_are_named_rows_of_the_variants_table(corpus, vectors):
    from forgetting.studies.text.tables import VARIANT_NAMES, variant_worlds, variants, variants_table

    world = RealTextWorld(n_episodes=120, shift_episode=40)
    worlds = variant_worlds(corpus, world)
    assert [name for name, _, _ in worlds] == list(VARIANT_NAMES)
    named = dict((name, w) for name, _, w in worlds)
    assert named["this_chapter"] == world and named["same_mix"].shift_episode == world.shift_episode
    assert (named["k_lower"].k, named["k_higher"].k) == (world.k - 1, world.k + 1)
    by_name = variants(corpus, vectors, world, 2)
    assert list(by_name) == list(VARIANT_NAMES)
    assert list(by_name.values()) == variants_table(corpus, vectors, world, 2)
    assert by_name["other_rule"]["world"] == worlds[-1][1]
