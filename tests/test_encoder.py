"""forgetting.text.encoder: the numpy all-MiniLM-L6-v2 against sentence-transformers, and what it refuses."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import forgetting
from forgetting.text import layers
from forgetting.text.encoder import MiniLMEncoder
from forgetting.text.model_files import (
    MODEL_FILES_SHA256,
    MODEL_SHA256,
    ModelDigestError,
    file_sha256,
    verify_model_dir,
    verify_model_file,
)

pytest_plugins = ("text_fixtures",)
pytestmark = pytest.mark.slow  # left out of the fast tier (make.py fast)


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


def _check_topk(
    ref_c: np.ndarray, ref_q: np.ndarray, np_c: np.ndarray, np_q: np.ndarray, k: int = 5, tie: float = 1e-6
) -> int:
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


def test_tampered_copy_is_refused(encoder_runtime: None, model_dir: Path, tmp_path: Path) -> None:
    copy_dir = tmp_path / "model"
    shutil.copytree(model_dir, copy_dir)
    weights = copy_dir / "model.safetensors"
    with open(weights, "r+b") as handle:  # flip one byte in the middle of the tensor data
        handle.seek(weights.stat().st_size // 2)
        byte = handle.read(1)
        handle.seek(-1, os.SEEK_CUR)
        handle.write(bytes([byte[0] ^ 0x01]))
    with pytest.raises(ModelDigestError, match="SHA-256"):
        verify_model_file(weights)
    with pytest.raises(ValueError, match="SHA-256"):  # ModelDigestError is a ValueError
        MiniLMEncoder(copy_dir)

    with open(weights, "r+b") as handle:  # truncated file
        handle.truncate(1000)
    with pytest.raises(ModelDigestError, match="SHA-256"):
        MiniLMEncoder(copy_dir)


def test_every_file_the_encoder_reads_has_a_digest(
    encoder_runtime: None, model_dir: Path, tmp_path: Path
) -> None:
    assert verify_model_dir(model_dir) == MODEL_FILES_SHA256
    assert MODEL_FILES_SHA256["model.safetensors"] == MODEL_SHA256
    assert sorted(MODEL_FILES_SHA256) == sorted(["model.safetensors", *CONFIG_FILES])
    # a folder holding only the listed files is enough: the encoder opens nothing else
    only = tmp_path / "model"
    for name in MODEL_FILES_SHA256:
        (only / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(model_dir / name, only / name)
    assert sorted(str(p.relative_to(only)) for p in only.rglob("*") if p.is_file()) == sorted(
        MODEL_FILES_SHA256
    )
    texts = ["The cat sat on the mat.", "Hello world!"]
    np.testing.assert_array_equal(MiniLMEncoder(only).encode(texts), MiniLMEncoder(model_dir).encode(texts))


def test_a_config_edited_to_five_layers_is_refused(
    encoder_runtime: None, model_dir: Path, tmp_path: Path
) -> None:
    copy_dir = tmp_path / "model"
    shutil.copytree(model_dir, copy_dir)
    config = copy_dir / "config.json"
    text = config.read_text()
    assert '"num_hidden_layers": 6' in text
    config.write_text(text.replace('"num_hidden_layers": 6', '"num_hidden_layers": 5'))
    found = file_sha256(config)
    expected = MODEL_FILES_SHA256["config.json"]
    with pytest.raises(ModelDigestError) as info:
        MiniLMEncoder(copy_dir)
    message = str(info.value)
    assert "config.json" in message and expected in message and found in message
    with pytest.raises(ModelDigestError, match="config.json"):
        verify_model_dir(copy_dir)


CONFIG_FILES = [
    "config.json",
    "sentence_bert_config.json",
    "modules.json",
    "1_Pooling/config.json",
    "tokenizer.json",
]  # every file the encoder reads besides the weights


@pytest.mark.parametrize("name", CONFIG_FILES)
def test_any_edited_or_missing_model_file_is_refused(
    encoder_runtime: None, model_dir: Path, tmp_path: Path, name: str
) -> None:
    copy_dir = tmp_path / "model"
    shutil.copytree(model_dir, copy_dir)
    edited = copy_dir / name
    edited.write_bytes(edited.read_bytes() + b" ")  # still valid JSON, different bytes
    with pytest.raises(ModelDigestError) as info:
        MiniLMEncoder(copy_dir)
    assert name in str(info.value) and MODEL_FILES_SHA256[name] in str(info.value)
    edited.unlink()
    with pytest.raises(ModelDigestError, match="missing"):
        MiniLMEncoder(copy_dir)


def test_tokenizer_truncates_to_256_not_128(encoder: MiniLMEncoder, model_dir: Path) -> None:
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


def test_architecture_read_from_config(encoder: MiniLMEncoder) -> None:
    assert (encoder.num_layers, encoder.num_heads, encoder.hidden_size) == (6, 12, 384)
    assert encoder.layer_norm_eps == 1e-12
    assert encoder.model_sha256 == MODEL_SHA256


def test_encode_shapes_norms_and_determinism(encoder: MiniLMEncoder) -> None:
    texts = ["", "hello", "hello", "x " * 400, "a somewhat longer sentence of ten tokens or so"]
    out = encoder.encode(texts, batch_size=2)
    assert out.shape == (5, 384) and out.dtype == np.float32
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(out[1], out[2])  # duplicates: computed once
    np.testing.assert_array_equal(out, encoder.encode(texts, batch_size=2))  # deterministic
    assert encoder.encode([]).shape == (0, 384)
    assert encoder.encode("hello").shape == (1, 384)
    # each text is computed alone: its batch neighbours change no bit
    single = np.vstack([encoder.encode([s]) for s in ["", "hello", texts[4]]])
    np.testing.assert_array_equal(single, out[[0, 1, 4]])
    with pytest.raises(TypeError, match="expected str, got NoneType"):
        encoder.encode([None])  # type: ignore[list-item]


BATCH_TEXTS = [
    "delta",  # "delta" and "epsilon" have the same token count: no padding between them
    "epsilon",
    "",
    "Hello world!",
    "The cat sat on the mat.",
    "Memory decay follows an exponential retention curve.",
    "Crème brûlée 🍮 東京は日本の首都です。",
    "An agent should forget stale facts that lead to failures, but keep the ones that still help.",
    LONG_ENGLISH,  # 256 tokens after truncation
]


def _batchings(encoder: MiniLMEncoder, texts: list[str], quick: bool = False) -> dict[str, np.ndarray]:
    """Ways of encoding ``texts`` in company, each giving one row per text in ``texts``' order
    (``quick``: three of them, for the subprocess runs)."""
    others = SENTENCES[3:12]
    ids, mask = encoder.tokenize(texts)
    ways: dict[str, Any] = {
        "in one call": lambda: encoder.encode(texts),
        "reversed, batch_size=3": lambda: encoder.encode(texts[::-1], batch_size=3)[::-1],
        "forward, padded batch": lambda: encoder.forward(ids, mask),
    }
    if not quick:
        ways |= {
            "batch_size=1": lambda: encoder.encode(texts, batch_size=1),
            "batch_size=2": lambda: encoder.encode(texts, batch_size=2),
            "interleaved with others": lambda: encoder.encode(
                [x for t, o in zip(texts, others) for x in (o, t)]
            )[1::2],
            "after a long text": lambda: encoder.encode([LONG_MIXED, *texts], batch_size=4)[1:],
            "forward_one": lambda: np.vstack([encoder.forward_one(i) for i in encoder.token_ids(texts)]),
        }
    return {name: way() for name, way in ways.items()}


def _same_bits_or_report(alone: np.ndarray, ways: dict[str, np.ndarray], texts: list[str]) -> list[str]:
    problems = []
    for name, got in ways.items():
        rows = [i for i in range(len(texts)) if got[i].tobytes() != alone[i].tobytes()]
        if rows:
            diff = float(np.abs(got.astype(np.float64) - alone).max())
            problems.append(f"{name}: {[texts[i][:20] for i in rows]} differ from alone (max {diff:.2e})")
    return problems


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_sentence_gets_the_same_bits_whatever_it_is_encoded_with(
    encoder: MiniLMEncoder, model_dir: Path, dtype: type[np.floating[Any]]
) -> None:
    enc = encoder if dtype is np.float32 else MiniLMEncoder(model_dir, dtype=dtype)
    lengths = [len(ids) for ids in enc.token_ids(BATCH_TEXTS)]
    assert lengths[0] == lengths[1] and len(set(lengths)) >= 6  # equal and unequal lengths
    alone = np.vstack([enc.encode([t]) for t in BATCH_TEXTS])
    assert alone.dtype == dtype
    assert _same_bits_or_report(alone, _batchings(enc, BATCH_TEXTS), BATCH_TEXTS) == []


def test_attention_without_blas_agrees_with_blas(
    encoder: MiniLMEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Long sentences' attention runs on numpy.einsum: forced on short ones, it must agree."""
    texts = BATCH_TEXTS[:-1]
    assert (
        max(len(ids) for ids in encoder.token_ids(texts)) ** 2 * encoder.head_dim
        < layers.BLAS_ONE_THREAD_WORK
    )
    with_blas = encoder.encode(texts)
    monkeypatch.setattr(layers, "BLAS_ONE_THREAD_WORK", 0)
    without = encoder.encode(texts)
    np.testing.assert_allclose(without, with_blas, rtol=0, atol=1e-6)


def test_forward_refuses_a_mask_that_is_not_a_prefix(encoder: MiniLMEncoder) -> None:
    ids, mask = encoder.tokenize(["a", "a b c"])
    holed = mask.copy()
    holed[1, 1] = 0
    with pytest.raises(ValueError, match="ones followed by zeros"):
        encoder.forward(ids, holed)
    with pytest.raises(ValueError, match="must be equal"):
        encoder.forward(ids, mask[:, :-1])
    with pytest.raises(ValueError, match="non-empty"):
        encoder.forward(ids, np.zeros_like(mask))
    with pytest.raises(ValueError, match="position table"):
        encoder.forward_one(np.ones(encoder.position_embeddings.shape[0] + 1, dtype=np.int64))


_INVARIANCE_SCRIPT = """
import hashlib, json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import test_encoder as t
from forgetting.text.encoder import MiniLMEncoder

encoder = MiniLMEncoder(dtype=sys.argv[2])
alone = np.vstack([encoder.encode([s]) for s in t.BATCH_TEXTS])
problems = t._same_bits_or_report(alone, t._batchings(encoder, t.BATCH_TEXTS, quick=True), t.BATCH_TEXTS)
print(json.dumps({"problems": problems, "sha256": hashlib.sha256(alone.tobytes()).hexdigest()}))
"""


def _openblas_with_dynamic_arch() -> bool:
    config: Any = np.show_config(mode="dicts")
    blas = config.get("Build Dependencies", {}).get("blas", {})
    return "openblas" in str(blas.get("name", "")) and "DYNAMIC_ARCH" in str(
        blas.get("openblas configuration", "")
    )


def _cpu_has(flag: str) -> bool:
    try:
        return flag in Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False


# OPENBLAS_VERBOSE=2 prints "Core: <name>"; x86_64 builds alias the older tables to Prescott's
# and print the first of them, Katmai
_CORES = {"Haswell": ("Haswell",), "Sandybridge": ("Sandybridge",), "Prescott": ("Prescott", "Katmai")}


def _run_in_fresh_process(threads: str, core: str | None, dtype: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENBLAS_", "OMP_", "GOTO_"))}
    env["OPENBLAS_NUM_THREADS"] = threads
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(forgetting.__file__).resolve().parents[1]), env.get("PYTHONPATH", "")]
    )
    if core is not None:
        env["OPENBLAS_CORETYPE"] = core
        env["OPENBLAS_VERBOSE"] = "2"
    done = subprocess.run(
        [sys.executable, "-c", _INVARIANCE_SCRIPT, str(Path(__file__).parent), dtype],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    if core is not None:
        assert any(f"Core: {name}" in done.stderr for name in _CORES[core]), done.stderr
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("core", [None, "Haswell", "Sandybridge", "Prescott"])
def test_the_same_bits_in_any_batch_and_on_any_thread_count(
    encoder: MiniLMEncoder, core: str | None, dtype: str
) -> None:
    """In a fresh process per BLAS setting: a text alone and in company gets the same bits, on
    one OpenBLAS thread or two (``core``: the kernel forced with OPENBLAS_CORETYPE; the kernel
    may change the bits, the thread count may not). float64 computes every text's tokens as
    columns of one matrix product (:func:`~forgetting.text.layers.encoder_columns_`), float32
    one product per text: both are checked under each kernel."""
    if core is not None:
        if not _openblas_with_dynamic_arch():
            pytest.skip("numpy's BLAS is not a DYNAMIC_ARCH OpenBLAS: OPENBLAS_CORETYPE means nothing")
        if core == "Haswell" and not _cpu_has("avx2"):
            pytest.skip("the Haswell kernels need AVX2")
        if core == "Sandybridge" and not _cpu_has("avx"):
            pytest.skip("the Sandybridge kernels need AVX")
    one, two = (_run_in_fresh_process(threads, core, dtype) for threads in ("1", "2"))
    assert one["problems"] == [] and two["problems"] == []
    assert one["sha256"] == two["sha256"]  # the thread count changes no bit


def test_matches_sentence_transformers(encoder: MiniLMEncoder, reference: Any) -> None:
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
    got = MiniLMEncoder(model_dir, dtype=np.float64).encode(subset)
    assert got.dtype == np.float64 and ref.dtype == np.float64
    diff = np.abs(got - ref).max()
    print(f"\nmax abs diff numpy float64 vs torch float64: {diff:.3e}")
    assert diff <= 1e-12


_COLUMNS_SCRIPT = """
import json, sys
import numpy as np
from forgetting.text.layers import padded_width

def product(weight, x):  # weight @ x on a padded width, the columns of x only
    padded = np.zeros((x.shape[0], padded_width(x.shape[1])), x.dtype)
    padded[:, : x.shape[1]] = x
    return (weight @ padded)[:, : x.shape[1]]

report = {}
for dtype in ("float64", "float32"):
    rng, differ, total = np.random.default_rng(3), 0, 0
    for out, inner in [(1152, 384), (384, 384), (1536, 384), (384, 1536)]:
        weight = rng.standard_normal((out, inner)).astype(dtype)
        for count, longest in [(2, 257), (12, 40), (60, 257), (150, 40)]:
            xs = [rng.standard_normal((inner, n)).astype(dtype) for n in rng.integers(1, longest, count)]
            together, start = product(weight, np.concatenate(xs, axis=1)), 0
            for x in xs:
                total += 1
                differ += not np.array_equal(product(weight, x), together[:, start : start + x.shape[1]])
                start += x.shape[1]
    report[dtype] = [differ, total]
print(json.dumps(report))
"""


@pytest.mark.parametrize("core", [None, "Haswell", "Zen", "SkylakeX", "Sandybridge", "Prescott"])
def test_a_column_of_a_padded_product_does_not_depend_on_the_others(core: str | None) -> None:
    """What :func:`~forgetting.text.layers.encoder_columns_` rests on: in float64, a sentence's
    columns of ``weight @ x`` (``x`` padded to :func:`~forgetting.text.layers.padded_width`)
    have the same bits alone and among 1 to 149 other sentences, on 1 and 2 threads; in float32
    the Haswell and Zen kernels change them (why float32 keeps one product per sentence)."""
    if core is not None:
        if not _openblas_with_dynamic_arch():
            pytest.skip("numpy's BLAS is not a DYNAMIC_ARCH OpenBLAS: OPENBLAS_CORETYPE means nothing")
        if core == "SkylakeX" and not _cpu_has("avx512f"):
            pytest.skip("the SkylakeX kernels need AVX-512")
        if core in ("Haswell", "Zen") and not _cpu_has("avx2"):
            pytest.skip("the Haswell kernels need AVX2")
        if core == "Sandybridge" and not _cpu_has("avx"):
            pytest.skip("the Sandybridge kernels need AVX")
    for threads in ("1", "2"):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENBLAS_", "OMP_", "GOTO_"))}
        env["OPENBLAS_NUM_THREADS"] = threads
        if core is not None:
            env["OPENBLAS_CORETYPE"] = core
        done = subprocess.run(
            [sys.executable, "-c", _COLUMNS_SCRIPT], env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout.strip().splitlines()[-1])
        assert report["float64"] == [0, 896], (core, threads, report)
        if core in ("Haswell", "Zen"):
            assert report["float32"][0] > 0, report
