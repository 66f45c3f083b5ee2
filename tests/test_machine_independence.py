"""Experiment 5's published files do not depend on the last digits of the embeddings.

Another CPU makes OpenBLAS pick another kernel, and the float32 vectors differ in their last
digits (cosines in the 7th significant digit). This test plays that machine: it fills a scratch
copy's embedding cache with the genuine vectors each multiplied elementwise by
``1 + 1e-6 u`` (``u`` uniform in [-1, 1), fixed seed), runs the chapter at its published
parameters on them, and requires every published file to come out byte for byte. The fast,
unit-level counterparts (the raw cosines and an unrounded ranking do move under such a
perturbation; the rounded ones do not) are in ``tests/test_similarity.py`` and ``tests/test_retrieval.py``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from conftest import copy_book
from forgetting import pipeline
from forgetting.studies.text.corpus_file import REPOSITORY_CORPUS, load_corpus
from forgetting.studies.text.retrieval import embed_corpus
from forgetting.text.cache import EmbeddingCache
from forgetting.text.model_files import ModelNotInstalledError, locate_model_dir
from forgetting.text.similarity import FLOAT32_ROUNDING, RELATIVE_PERTURBATION, cosine_matrix

pytestmark = pytest.mark.book

IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
SEED = 20240601


def _perturbed(vectors: np.ndarray, seed: int = SEED) -> np.ndarray:
    """``vectors * (1 + RELATIVE_PERTURBATION * u)``, ``u ~ uniform[-1, 1)``, back in float32."""
    noise = np.random.default_rng(seed).uniform(-1.0, 1.0, vectors.shape)
    return (vectors.astype(np.float64) * (1.0 + RELATIVE_PERTURBATION * noise)).astype(np.float32)


def test_chapter_results_survive_a_relative_1e6_perturbation_of_the_vectors(tmp_path):
    try:
        locate_model_dir()
    except ModelNotInstalledError as exc:
        if IN_CI:
            pytest.fail(f"CI is set, refusing to skip: {exc}", pytrace=False)
        pytest.skip(str(exc))
    (tmp_path / "repo").mkdir()
    root = copy_book(tmp_path / "repo")
    corpus = load_corpus(root / REPOSITORY_CORPUS)
    texts = [m.text for m in corpus.memories] + [q.text for q in corpus.queries]

    # the genuine vectors, computed the way the chapter computes them (one call, same batches)
    genuine = embed_corpus(corpus, tmp_path / "genuine-cache")
    assert genuine.cache_misses == len(set(texts))
    vectors = np.vstack([genuine.memories, genuine.queries])
    moved = _perturbed(vectors)

    # the perturbation is real: (almost) every component moved, by at most ~1e-6 relative
    assert moved.dtype == vectors.dtype == np.float32 and moved.shape == vectors.shape
    assert np.mean(moved != vectors) > 0.9
    relative = np.abs(moved.astype(np.float64) / vectors.astype(np.float64) - 1.0)
    assert relative[vectors != 0].max() <= RELATIVE_PERTURBATION + FLOAT32_ROUNDING * 2
    n = len(corpus.memories)
    raw = cosine_matrix(vectors[:n], vectors[:n])
    raw_moved = cosine_matrix(moved[:n], moved[:n])
    assert not np.array_equal(raw, raw_moved)  # the unrounded cosines' last digits moved

    # the chapter's cache (see book/mw-exp5.ipynb: root/.cache/embeddings) holds the moved ones
    cache = EmbeddingCache(root / ".cache" / "embeddings")
    for text, vector in zip(texts, moved):
        cache.put(text, vector)
    entries = {path: path.read_bytes() for path in cache.directory.rglob("*" + cache.SUFFIX)}
    assert len(entries) == len(set(texts))

    run = pipeline.run_chapter(root, "mw-exp5")

    # the chapter really ran on the perturbed vectors: no entry was rejected and recomputed
    assert {path: path.read_bytes() for path in cache.directory.rglob("*" + cache.SUFFIX)} == entries
    assert run.published
    assert pipeline.compare(root, run) == []
