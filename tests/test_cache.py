"""forgetting.text.cache: round trips, and a bad entry is recomputed, never returned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from forgetting.text import cache as cache_module
from forgetting.text.cache import EmbeddingCache, encode_cached, text_sha256
from forgetting.text.encoder import MiniLMEncoder
from forgetting.text.model_files import MODEL_SHA256

pytest_plugins = ("text_fixtures",)


def test_cache_round_trip(encoder: MiniLMEncoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ["", "alpha", "beta", "alpha", "Crème brûlée 🍮", "x " * 40]
    first = encode_cached(texts, tmp_path, encoder=encoder)
    assert first.shape == (len(texts), 384) and first.dtype == np.float32
    np.testing.assert_array_equal(first[1], first[3])
    np.testing.assert_array_equal(first, encoder.encode(texts))  # same bits, cached or not

    cache = EmbeddingCache(tmp_path, encoder=encoder)
    assert cache.directory.parent == tmp_path
    assert cache.directory.name.startswith(MODEL_SHA256[:16])
    files = sorted(cache.directory.rglob("*" + EmbeddingCache.SUFFIX))
    assert len(files) == len(set(texts))
    for text in set(texts):
        assert cache.path_for(text).is_file()
        assert cache.path_for(text).stem == text_sha256(text)
    assert not list(tmp_path.rglob("*.tmp"))  # atomic writes leave nothing behind

    # second run: nothing may be recomputed
    def boom(*args: Any, **kwargs: Any) -> np.ndarray:
        raise AssertionError("encoder called although everything is cached")

    monkeypatch.setattr(encoder, "encode", boom)
    monkeypatch.setattr(cache_module, "get_encoder", boom)
    second = encode_cached(texts, tmp_path, encoder=encoder)
    np.testing.assert_array_equal(first, second)
    lazy = EmbeddingCache(tmp_path)  # no encoder: a fully cached call never loads one
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
    third = encode_cached(texts + ["gamma"], tmp_path, encoder=encoder)
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


def _as_version_1(path: Path) -> None:
    """A well-formed entry of the cache's version 1 (before the float64 encoder's column products),
    its checksum intact: the version alone makes it a miss."""
    head, _, payload = path.read_bytes().partition(b"\n")
    fields = head.decode().split(" ")
    assert fields[1] == str(EmbeddingCache.VERSION) == "2"
    fields[1] = "1"
    path.write_bytes(" ".join(fields).encode() + b"\n" + payload)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(_as_version_1, id="version-1"),
        pytest.param(lambda p: _overwrite_with_npy(p, np.zeros(384, dtype=np.float32)), id="npy-zeros"),
        pytest.param(lambda p: _overwrite_with_npy(p, np.zeros(3, dtype=np.float32)), id="npy-wrong-shape"),
        pytest.param(_zero_payload, id="zeros-under-a-valid-header"),
        pytest.param(_truncate, id="truncated"),
        pytest.param(_as_float64, id="wrong-dtype"),
        pytest.param(lambda p: p.write_bytes(b""), id="empty"),
    ],
)
def test_a_bad_cache_entry_is_recomputed_never_returned(
    encoder: MiniLMEncoder, tmp_path: Path, damage: Any
) -> None:
    texts = ["delta", "epsilon"]
    good = EmbeddingCache(tmp_path, encoder=encoder).encode(texts)
    path = EmbeddingCache(tmp_path, encoder=encoder).path_for("delta")
    damage(path)

    cache = EmbeddingCache(tmp_path, encoder=encoder)
    assert cache.get("delta") is None  # the bad entry is never handed out
    again = cache.encode(texts)
    assert (cache.hits, cache.misses) == (1, 1)  # only the damaged entry was recomputed
    np.testing.assert_array_equal(again, good)
    assert np.all(np.linalg.norm(again, axis=1) > 0.99)

    rewritten = EmbeddingCache(tmp_path, encoder=encoder)  # and it was rewritten, valid
    np.testing.assert_array_equal(rewritten.get("delta"), good[0])
    np.testing.assert_array_equal(rewritten.encode(texts), good)
    assert (rewritten.hits, rewritten.misses) == (2, 0)


def test_a_cache_entry_filed_under_another_text_is_refused(encoder: MiniLMEncoder, tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path, encoder=encoder)
    cache.encode(["delta", "epsilon"])
    # a valid entry, but for another text: its header names the other text's key
    cache.path_for("delta").write_bytes(cache.path_for("epsilon").read_bytes())
    fresh = EmbeddingCache(tmp_path, encoder=encoder)
    assert fresh.get("delta") is None
    fresh.encode(["delta"])
    assert (fresh.hits, fresh.misses) == (0, 1)


@pytest.mark.parametrize(
    "digest",
    ["../../../escape", "../" + "0" * 61, "/" + "a" * 63, MODEL_SHA256.upper(), MODEL_SHA256[:-1], "", 7],
)
def test_a_model_digest_that_is_not_sha256_hex_is_refused_before_any_path_is_built(
    tmp_path: Path, digest: Any
) -> None:
    with pytest.raises(ValueError, match="model_sha256 must be 64 lowercase hex characters"):
        EmbeddingCache(tmp_path / "root", model_sha256=digest)
    assert not (tmp_path / "root").exists() and list(tmp_path.iterdir()) == []


def test_every_cache_folder_is_one_folder_inside_its_root(tmp_path: Path) -> None:
    for dtype in (None, np.float64, "float32"):
        cache = EmbeddingCache(tmp_path, model_sha256="0" * 64, dtype=dtype)
        assert cache.directory.parent == tmp_path and cache.directory.resolve().parent == tmp_path.resolve()
        assert cache.path_for("text").resolve().is_relative_to(tmp_path.resolve())
    with pytest.raises(ValueError, match="dtype must be float32 or float64, got 'float16'"):
        EmbeddingCache(tmp_path, dtype="float16")
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        EmbeddingCache(tmp_path, dtype="not a dtype")


def test_encode_checks_every_text_and_the_batch_size_before_counting(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    with pytest.raises(TypeError, match="expected str"):
        cache.encode(["fine", 3])
    with pytest.raises(ValueError, match="batch_size must be an int >= 1"):
        cache.encode(["fine"], batch_size=0)
    assert (cache.hits, cache.misses) == (0, 0) and list(tmp_path.iterdir()) == []
