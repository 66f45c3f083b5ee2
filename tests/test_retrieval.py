"""forgetting.studies.text.retrieval: the corpus vectors, the top-k of each phase, robustness."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from forgetting.studies.text.corpus import AFTER, BEFORE
from forgetting.studies.text.exp5 import RealTextWorld, run_episodes
from forgetting.studies.text.retrieval import CorpusEmbeddings, embed_corpus, retrieve, robustness
from forgetting.studies.text.summary import summarise
from forgetting.studies.text.tables import hitchhiker_table, memory_similarity
from forgetting.text import cache as cache_module
from forgetting.text.model_files import EMBEDDING_DIM, MODEL_SHA256
from forgetting.text.similarity import (
    COSINE_DECIMALS,
    COSINE_TOLERANCE,
    RELATIVE_PERTURBATION,
    cosine_change_bound,
    cosine_matrix,
)

pytest_plugins = ("text_fixtures",)


def test_cache_is_reused_without_loading_the_model(corpus, cache_dir, first_embedding, monkeypatch):
    n_texts = len(corpus.memories) + len(corpus.queries)
    assert first_embedding.cache_misses == n_texts and first_embedding.cache_hits == 0
    assert first_embedding.model_sha256 == MODEL_SHA256
    assert first_embedding.memories.shape == (len(corpus.memories), EMBEDDING_DIM)

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded although every text is cached")

    monkeypatch.setattr(cache_module, "get_encoder", no_model)
    again = embed_corpus(corpus, cache_dir, verify_model=False)
    assert again.cache_hits == n_texts and again.cache_misses == 0
    assert np.array_equal(again.memories, first_embedding.memories)
    assert np.array_equal(again.queries, first_embedding.queries)


def test_retrieval_respects_the_store_of_each_phase(corpus, vectors):
    fixed = corpus.index("fix-kubernetes")
    before = retrieve(corpus, vectors, BEFORE, 3)
    after = retrieve(corpus, vectors, AFTER, 3)
    assert not np.any(before.top == fixed)
    assert np.any(after.top == fixed)
    assert np.all(np.diff(before.scores, axis=1) <= 0)  # best first
    assert not before.misled.any()  # nothing is wrong before the shift


def test_equal_rounded_cosines_go_to_the_memory_whose_id_sorts_first(corpus, vectors):
    memories = vectors.memories.copy()
    memories[5] = memories[2]  # memory 5 now ties with memory 2 for every query
    tied = replace(vectors, memories=memories)
    retrieval = retrieve(corpus, tied, BEFORE, len(corpus.memories) - 1)
    ids = corpus.memory_ids
    first, second = sorted([2, 5], key=lambda i: ids[i])
    for row, scores in zip(retrieval.top, retrieval.scores):
        positions = {int(m): p for p, m in enumerate(row)}
        assert positions[first] < positions[second]
        # anything in between ties with them after rounding and has an id in between
        for between in range(positions[first] + 1, positions[second]):
            assert scores[between] == scores[positions[first]]
            assert ids[first] < ids[row[between]] < ids[second]


def test_corpus_decisions_and_published_cosines_are_clear_of_rounding_boundaries(corpus, vectors):
    report = robustness(corpus, vectors, (2, 3, 4))
    assert report["decisions"] == 2 * 3 * len(corpus.queries)
    assert report["fragile_decisions"] == 0 and report["fragile_cosines"] == 0
    assert report["changed_by_rounding"] == 0  # rounding keeps every decision the raw cosines made
    n = len(corpus.memories)
    assert report["published_cosines"] == n * (n + 1) // 2  # every memory pair, as in the figure
    # one decimal more would not be safe: some memory-pair cosines lie within their bound
    assert robustness(corpus, vectors, (3,), decimals=COSINE_DECIMALS + 1)["fragile_cosines"] >= 1


def _perturb(array, rng):
    """Every component times (1 + 1e-6 u), u uniform in [-1, 1): a relative 1e-6 perturbation."""
    return (array.astype(np.float64) * (1 + RELATIVE_PERTURBATION * rng.uniform(-1, 1, array.shape))).astype(
        np.float32
    )


def test_a_relative_1e6_perturbation_moves_raw_cosines_but_no_result(corpus, vectors):
    rng = np.random.default_rng(2024)
    moved = replace(vectors, memories=_perturb(vectors.memories, rng), queries=_perturb(vectors.queries, rng))
    assert not np.array_equal(moved.memories, vectors.memories)
    raw, raw_moved = (cosine_matrix(v.memories, v.memories) for v in (vectors, moved))
    assert not np.array_equal(raw, raw_moved)  # the last digits do move ...
    assert np.all(np.abs(raw - raw_moved) <= cosine_change_bound(vectors.memories, vectors.memories))
    assert cosine_change_bound(vectors.memories, vectors.memories).max() <= COSINE_TOLERANCE
    for phase in (BEFORE, AFTER):  # ... the rounded cosines and decisions do not
        for k in (2, 3, 4):
            a, b = retrieve(corpus, vectors, phase, k), retrieve(corpus, moved, phase, k)
            assert np.array_equal(a.top, b.top) and np.array_equal(a.scores, b.scores)
    run, run_moved = (run_episodes(corpus, v, RealTextWorld()) for v in (vectors, moved))
    assert hitchhiker_table(run, vectors) == hitchhiker_table(run_moved, moved)
    assert summarise(run) == summarise(run_moved)
    assert np.array_equal(memory_similarity(corpus, vectors)[0], memory_similarity(corpus, moved)[0])


def _blank(corpus):
    """Vectors that are never read: the checks come before any cosine."""
    zeros = np.zeros((1, EMBEDDING_DIM), dtype=np.float32)
    return CorpusEmbeddings(zeros, zeros, "0" * 64, 0, 0)


@pytest.mark.parametrize("k", [0, -1, True, 2.0, "3", None])
def test_retrieve_refuses_a_k_that_is_not_an_int_of_at_least_one(corpus, k):
    with pytest.raises(ValueError, match=r"k must be an int >= 1 and <= \d+ \(the memories in the store"):
        retrieve(corpus, _blank(corpus), BEFORE, k)


def test_retrieve_refuses_a_k_beyond_the_store_and_lists_every_problem(corpus):
    store = int(corpus.available(AFTER).sum())
    with pytest.raises(
        ValueError, match=rf"<= {store} \(the memories in the store in phase 'after'\), got {store + 1}"
    ):
        retrieve(corpus, _blank(corpus), AFTER, store + 1)
    with pytest.raises(ValueError) as error:
        retrieve(corpus, _blank(corpus), "during", 0, outcome="broad", decimals=-1)
    for name in ("phase", "k", "outcome", "decimals"):
        assert f"{name} must be" in str(error.value)
    with pytest.raises(ValueError, match="k must be"):
        robustness(corpus, _blank(corpus), [0])


@pytest.mark.parametrize("flag", ["no", 0, None])
def test_embed_corpus_refuses_a_verify_model_flag_that_is_not_a_bool(corpus, tmp_path, flag):
    with pytest.raises(ValueError, match="verify_model must be a bool"):
        embed_corpus(corpus, tmp_path, verify_model=flag)
    assert list(tmp_path.iterdir()) == []


def test_robustness_depths_and_values(corpus, vectors):
    from forgetting.studies.text.retrieval import robustness_depths, robustness_values

    assert robustness_depths(3, [1, 2, 3, 4, 5]) == [1, 2, 3, 4, 5]
    assert robustness_depths(1, [6]) == [1, 2, 6]
    values = robustness_values(corpus, vectors, [2, 3])
    report = robustness(corpus, vectors, [2, 3])
    assert values["robust_ks"] == "{2, 3}" and values["robust_decisions"] == report["decisions"]
    assert values["fragile_decisions"] == report["fragile_decisions"] == 0
    assert values["finer_decimals"] == values["cosine_decimals"] + 1
    assert values["finer_verdict"].startswith(("some of these", "these would all"))
