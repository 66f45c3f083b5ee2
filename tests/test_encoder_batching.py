"""A text's vector is a function of the text alone: the same bits alone, in any batch, in any
order, with any ``batch_size``, and in worker processes.

The encoder stacks texts of equal token length (:mod:`forgetting.text.layers`); these tests
hold it to the invariant that stacking changes no bit. They encode many small batches, so they
are ``slow``.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forgetting.studies.conversations import embeddings
from forgetting.text import model_files

#: Mixed lengths: two pairs of equal token length (stacked together), the empty text, and two
#: texts of equal length past the attention's BLAS limit (their attention runs on einsum).
CORPUS = [
    "delta",
    "epsilon",
    "",
    "Hello world!",
    "The cat sat on the mat.",
    "The dog sat on the rug.",
    "Memory decay follows an exponential retention curve.",
    "Crème brûlée 🍮 東京は日本の首都です。",
    "An agent should forget stale facts that lead to failures, but keep the ones that still help.",
    "x " * 130,
    "y " * 130,
]

DTYPES = ["float32", "float64"]


def _model_installed() -> bool:
    try:
        return (model_files.locate_model_dir() / model_files.WEIGHTS_FILE).is_file()
    except model_files.ModelNotInstalledError:
        return False


needs_model = pytest.mark.skipif(not _model_installed(), reason="all-MiniLM-L6-v2 is not installed")


def _encode(dtype: str, texts: list[str], batch_size: int = 32) -> np.ndarray:
    """Encode in whatever process runs this (a module-level function: picklable)."""
    from forgetting.text.encoder import get_encoder

    return get_encoder(dtype).encode(texts, batch_size=batch_size)


@pytest.fixture(scope="module")
def alone() -> dict[str, np.ndarray]:
    """Each text of :data:`CORPUS` encoded on its own, per dtype."""
    return {dtype: np.vstack([_encode(dtype, [text]) for text in CORPUS]) for dtype in DTYPES}


def _differing(got: np.ndarray, rows: list[int], reference: np.ndarray) -> list[str]:
    return [CORPUS[i][:20] for row, i in zip(got, rows) if row.tobytes() != reference[i].tobytes()]


@needs_model
@pytest.mark.slow
def test_the_corpus_stacks_texts_of_equal_length() -> None:
    from forgetting.text.encoder import get_encoder
    from forgetting.text.layers import BLAS_ONE_THREAD_WORK

    encoder = get_encoder("float32")
    lengths = [len(ids) for ids in encoder.token_ids(CORPUS)]
    assert lengths[0] == lengths[1] and lengths[4] == lengths[5] and lengths[9] == lengths[10]
    assert lengths[9] ** 2 * encoder.head_dim >= BLAS_ONE_THREAD_WORK  # einsum attention
    assert len(set(lengths)) >= 7


@needs_model
@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_same_bits_in_any_batch_and_any_order(
    alone: dict[str, np.ndarray], dtype: str, data: st.DataObject
) -> None:
    rows = data.draw(
        st.lists(st.integers(0, len(CORPUS) - 1), min_size=1, max_size=2 * len(CORPUS)), label="rows"
    )  # any subset, any order, duplicates allowed
    batch_size = data.draw(st.integers(1, len(rows) + 1), label="batch_size")
    got = _encode(dtype, [CORPUS[i] for i in rows], batch_size)
    assert got.dtype == np.dtype(dtype)
    assert _differing(got, rows, alone[dtype]) == []


@needs_model
@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_same_bits_in_worker_processes(alone: dict[str, np.ndarray], dtype: str) -> None:
    """Two fresh processes (spawned: they load the model themselves), each given the corpus in
    another order and batching, give every text the bits it has alone here."""
    everything = list(range(len(CORPUS)))
    orders = [everything[::-1], everything[1::2] + everything[::2]]
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [
            pool.submit(_encode, dtype, [CORPUS[i] for i in order], batch_size)
            for order, batch_size in zip(orders, (3, 32))
        ]
        results = [future.result(timeout=600) for future in futures]
    for order, got in zip(orders, results):
        assert sorted(order) == list(range(len(CORPUS)))
        assert _differing(got, order, alone[dtype]) == []


@needs_model
@pytest.mark.slow
def test_length_chunks_keep_every_text_longest_first() -> None:
    from forgetting.text.encoder import get_encoder

    encoder = get_encoder("float64")
    chunks = embeddings._length_chunks(CORPUS, encoder, 4)
    assert [len(chunk) for chunk in chunks] == [4, 4, 3]
    flat = [text for chunk in chunks for text in chunk]
    assert sorted(flat) == sorted(CORPUS)
    counts = [len(ids) for ids in encoder.token_ids(flat)]
    assert counts == sorted(counts, reverse=True)
