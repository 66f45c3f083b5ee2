"""Where LongMemEval's per-question files come from, and the checks every copy passes.

LongMemEval (Wu et al., ICLR 2025; github.com/xiaowu0162/LongMemEval, MIT) is read from the
per-question files committed in github.com/hussainzs/Memoria at commit :data:`LME_COMMIT`, folder
``evaluations/data/lme_jsons/`` (one official-format question per file, named
``<number of sessions>_<question_id>.json``): all 500 questions of the *oracle* setting and the 78
knowledge-update questions of the *S* setting. The project commits only the manifest
(:data:`MANIFEST_PATH`: setting, file, bytes and SHA-256 of every file, itself pinned by
:data:`MANIFEST_SHA256`), never the data.

:func:`longmemeval_copy` returns the first of these that holds every file needed, each of the
manifest's size and SHA-256:

1. the ``local`` argument (a zip of ``lme_jsons/<file>`` members, or a folder of the files);
2. the file named by the environment variable :data:`LME_ENV` (the same);
3. ``<cache>/`` (default ``<root>/`` :data:`CACHE_DIR`, git-ignored) when it already holds
   every file needed; 4. the missing files downloaded one by one from :func:`file_url` (pinned to
   the commit) into the cache (``download=True`` and ``$FORGETTING_OFFLINE`` not ``1``);
5. the zip beside the project, ``<root>/`` :data:`SHARED_COPY`.

A named copy (``local``, the variable) or the copy beside the project that lacks a file or holds
one of another size or digest raises a one-line ``ValueError`` naming the file; a damaged cached
file is passed over and downloaded again; a refused download leaves nothing in the cache. When no
copy can be had, :class:`~.source.DataUnavailable` says in one line what was tried.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import io
import os
import re
import urllib.request
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

from .. import safeio
from .._validate import bool_problem, is_real, raise_problems, shown
from .source import OFFLINE_ENV, DataUnavailable, open_regular, repository_root

__all__ = [
    "CACHE_DIR",
    "LME_COMMIT",
    "LME_ENV",
    "LME_FOLDER",
    "LME_REPOSITORY",
    "MANIFEST_PATH",
    "MANIFEST_SHA256",
    "MAX_FILE_BYTES",
    "MEMBER_FOLDER",
    "SHARED_COPY",
    "ManifestEntry",
    "Setting",
    "file_url",
    "longmemeval_copy",
    "read_copy",
    "read_manifest",
    "verify_copy",
]

#: The repository that holds the per-question files, and the commit they are pinned to.
LME_REPOSITORY = "hussainzs/Memoria"
LME_COMMIT = "959167b875ddc992661da1cf1a3263821e6831ed"
#: The folder of that repository that holds them.
LME_FOLDER = "evaluations/data/lme_jsons/"
#: The folder of a zip copy that holds them (the local copy's layout).
MEMBER_FOLDER = "lme_jsons/"
#: The environment variable that names a local copy (a zip or a folder).
LME_ENV = "FORGETTING_LONGMEMEVAL"
#: The committed manifest, relative to the repository root.
MANIFEST_PATH = Path("data") / "longmemeval" / "MANIFEST.tsv"
#: SHA-256 of that manifest (578 rows, copied from the local zip's ``MANIFEST.tsv``).
MANIFEST_SHA256 = "f81f818e156d3f9b23c404f2eacc506c6b0bba5aecff898f4713d073c7b7bbba"
#: The cache folder, relative to the repository root (git-ignored, as all of ``.cache/``).
CACHE_DIR = Path(".cache") / "longmemeval"
#: The zip beside the project, relative to the repository root.
SHARED_COPY = Path("..") / "shared" / "data" / "longmemeval" / "longmemeval-memoria-959167b.zip"
#: The largest per-question file read or downloaded (4 MiB; the largest of the manifest is 550 KB).
MAX_FILE_BYTES = 4 << 20
#: The largest zip or manifest read (64 MiB; the local zip is 16.7 MB).
MAX_ZIP_BYTES = 64 << 20
#: Seconds one download may wait for the server.
DOWNLOAD_TIMEOUT = 5.0

_HEX64 = re.compile(r"[0-9a-f]{64}")
_FILE = re.compile(r"[1-9]\d*_[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*\.json")
_HEADER = "setting\tfile\tbytes\tsha256"


class Setting(StrEnum):
    """The two settings the copy holds: ``oracle`` (only each question's evidence sessions, all
    500 questions) and ``s`` (about 50 sessions of history each; only the 78 knowledge updates)."""

    ORACLE = "oracle"
    S = "s"


class ManifestEntry(NamedTuple):
    """One row of the manifest: the setting, the file's name, its size in bytes and SHA-256."""

    setting: Setting
    file: str
    size: int
    sha256: str


def file_url(name: str) -> str:
    """The raw address of file ``name`` pinned to :data:`LME_COMMIT`.

    >>> file_url("1_001be529.json")[:60]
    'https://raw.githubusercontent.com/hussainzs/Memoria/959167b8'
    """
    return f"https://raw.githubusercontent.com/{LME_REPOSITORY}/{LME_COMMIT}/{LME_FOLDER}{name}"


def read_manifest(
    path: Path | None = None, sha256: str | None = MANIFEST_SHA256
) -> tuple[ManifestEntry, ...]:
    """The manifest's rows in file order: ``setting<TAB>file<TAB>bytes<TAB>sha256`` under that header.

    ``path`` default: ``<root>/`` :data:`MANIFEST_PATH`. ``sha256`` (``None``: not checked) is the
    digest the manifest file must have.

    Raises
    ------
    DataUnavailable
        No path given and no checkout to find the committed manifest in.
    ValueError
        A wrong digest, or every malformed row (a setting not in :class:`Setting`, a file name
        not ``<n>_<question_id>.json`` of letters, digits and underscores, a repeated file, a
        size not a positive int, a digest not 64 hex digits), all in one message naming the
        manifest and each row's line.
    """
    if path is None:
        root = repository_root()
        if root is None:
            raise DataUnavailable(
                f"no LongMemEval manifest: not in a checkout (it is {MANIFEST_PATH} of the project)"
            )
        path = root / MANIFEST_PATH
    with open_regular(path, "manifest", MAX_ZIP_BYTES) as handle:
        data = handle.read(MAX_ZIP_BYTES + 1)
    if sha256 is not None and (found := hashlib.sha256(data).hexdigest()) != sha256:
        raise ValueError(
            f"{path}: SHA-256 is {found[:16]}..., expected {sha256[:16]}...; refusing the manifest"
        )
    lines = data.decode("utf-8", errors="replace").splitlines()
    problems: list[str] = []
    if not lines or lines[0] != _HEADER:
        problems.append(f"line 1 must be {_HEADER!r}, got {shown(lines[0] if lines else '')}")
    entries: list[ManifestEntry] = []
    seen: set[str] = set()
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != 4:
            problems.append(f"line {number} must have 4 tab-separated fields, got {shown(line)}")
            continue
        setting, name, size, digest = fields
        before = len(problems)
        if setting not in set(Setting):
            problems.append(
                f"line {number}: setting must be one of {[s.value for s in Setting]}, got {shown(setting)}"
            )
        if not _FILE.fullmatch(name):
            problems.append(
                f"line {number}: file must be '<sessions>_<question_id>.json' (letters, digits, _), "
                f"got {shown(name)}"
            )
        elif name in seen:
            problems.append(f"line {number}: file {name!r} is listed twice")
        if not size.isdigit() or int(size) < 1:
            problems.append(f"line {number}: bytes must be a positive int, got {shown(size)}")
        if not _HEX64.fullmatch(digest):
            problems.append(
                f"line {number}: sha256 must be 64 lowercase hexadecimal digits, got {shown(digest)}"
            )
        seen.add(name)
        if len(problems) == before:
            entries.append(ManifestEntry(Setting(setting), name, int(size), digest))
    if not entries and not problems:
        problems.append("no rows")
    if problems:
        raise ValueError(
            f"{path}: not a LongMemEval manifest ({len(problems)} problem(s)): " + "; ".join(problems[:20])
        )
    return tuple(entries)


def _needed(entries: Sequence[ManifestEntry], setting: Setting | str | None) -> list[ManifestEntry]:
    return [e for e in entries if setting is None or e.setting == setting]


def _checked(entry: ManifestEntry, data: bytes, label: object) -> bytes:
    """``data`` if it is ``entry``'s file (size, then SHA-256), else a one-line ``ValueError``."""
    if len(data) != entry.size:
        raise ValueError(
            f"{label}: {entry.file} has {len(data)} bytes, the manifest says {entry.size}; "
            "refusing it (truncated, or not the pinned file)"
        )
    found = hashlib.sha256(data).hexdigest()
    if found != entry.sha256:
        raise ValueError(
            f"{label}: {entry.file} has SHA-256 {found[:16]}..., the manifest says {entry.sha256[:16]}...; "
            "refusing it (not the pinned file, or damaged)"
        )
    return data


def _folder_bytes(folder: Path, entry: ManifestEntry, label: object) -> bytes:
    path = folder / entry.file
    try:
        with open_regular(path, str(label), MAX_FILE_BYTES) as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise ValueError(f"{label}: {entry.file} is missing; refusing the copy") from None
    return _checked(entry, data, label)


@contextlib.contextmanager
def _open_archive(path: Path, label: object) -> Iterator[zipfile.ZipFile]:
    with open_regular(path, str(label), MAX_ZIP_BYTES) as handle:
        data = handle.read(MAX_ZIP_BYTES + 1)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise ValueError(
            f"{label}: not a readable zip ({' '.join(str(error).split())}); refusing it"
        ) from None
    with archive:
        yield archive


def _member_bytes(archive: zipfile.ZipFile, entry: ManifestEntry, label: object) -> bytes:
    name = MEMBER_FOLDER + entry.file
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise ValueError(f"{label}: member {name!r} is missing; refusing the copy") from None
    if info.file_size > MAX_FILE_BYTES:
        raise ValueError(
            f"{label}: member {name!r} has {info.file_size} bytes, over {MAX_FILE_BYTES}; refusing it"
        )
    try:
        data = archive.read(name)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as error:
        raise ValueError(
            f"{label}: member {name!r} is damaged ({' '.join(str(error).split())}); refusing it"
        ) from None
    return _checked(entry, data, label)


def read_copy(
    path: Path, entries: Iterable[ManifestEntry], label: object = None
) -> Iterator[tuple[ManifestEntry, bytes]]:
    """Each entry's bytes from the copy at ``path`` (a zip or a folder), checked against it.

    The bytes yielded are the bytes checked. Raises ``ValueError`` (one line naming ``label``,
    default ``path``, and the file) for a missing file, a wrong size or digest, an unreadable zip;
    ``FileNotFoundError`` for nothing at ``path``.
    """
    label = label or path
    path = Path(path)
    if path.is_dir():
        for entry in entries:
            yield entry, _folder_bytes(path, entry, label)
        return
    with _open_archive(path, label) as archive:
        for entry in entries:
            yield entry, _member_bytes(archive, entry, label)


def verify_copy(path: Path, entries: Iterable[ManifestEntry], label: object = None) -> Path:
    """``path`` if every entry's file in it has the manifest's size and SHA-256 (:func:`read_copy`)."""
    for _ in read_copy(path, entries, label):
        pass
    return path


def _check_arguments(
    setting: object, local: object, cache: object, download: object, root: object, timeout: object
) -> None:
    problems = [bool_problem("download", download)]
    if setting is not None and setting not in set(Setting):
        problems.append(f"setting must be one of {[s.value for s in Setting]} or None, got {shown(setting)}")
    for name, value in (("local", local), ("cache", cache), ("root", root)):
        if value is not None and not isinstance(value, (str, os.PathLike)):
            problems.append(f"{name} must be a path or None, got {shown(value)}")
    if not is_real(timeout) or not 0 < float(timeout) <= 60:  # type: ignore[arg-type]
        problems.append(f"timeout must be seconds in (0, 60], got {shown(timeout)}")
    raise_problems(problems)


def _given(path: Path, what: str, needed: Sequence[ManifestEntry]) -> Path:
    if not path.is_dir():
        try:
            open_regular(path, what, MAX_ZIP_BYTES).close()
        except FileNotFoundError as error:
            raise ValueError(f"{error}; refusing it (name a LongMemEval zip or folder)") from None
    return verify_copy(path.resolve(), needed, what)


def _download(entry: ManifestEntry, folder: Path, timeout: float) -> str | None:
    """Download ``entry`` into ``folder`` atomically; ``None`` on success, else why the network failed.

    A download of the wrong size or digest raises ``ValueError`` and leaves nothing."""
    url = file_url(entry.file)

    def write(handle: Any) -> None:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data = response.read(MAX_FILE_BYTES + 1)
        handle.write(_checked(entry, data, url))

    target = folder / entry.file
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temp = safeio.write_temp(target, write)
    except (OSError, http.client.HTTPException) as error:
        return f"{type(error).__name__}: {' '.join(str(error).split())}"[:160]
    try:
        os.replace(temp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    return None


def _cached(folder: Path, needed: Sequence[ManifestEntry]) -> list[ManifestEntry]:
    """The entries of ``needed`` the cache does not hold intact (a damaged one is removed)."""
    missing = []
    for entry in needed:
        path = folder / entry.file
        if not path.is_file():
            missing.append(entry)
            continue
        try:
            _folder_bytes(folder, entry, folder)
        except ValueError:
            with contextlib.suppress(OSError):
                path.unlink()
            missing.append(entry)
    return missing


def longmemeval_copy(
    setting: Setting | str | None = None,
    local: Path | None = None,
    cache: Path | None = None,
    download: bool = True,
    *,
    root: Path | None = None,
    manifest: Sequence[ManifestEntry] | None = None,
    timeout: float = DOWNLOAD_TIMEOUT,
) -> Path:
    """A checked copy of LongMemEval's files of ``setting``: the first found of the module's order.

    Parameters
    ----------
    setting : Setting or str, optional
        ``"oracle"`` or ``"s"``; ``None``: every file of the manifest.
    local : path, optional
        A zip or folder to use; it must hold every file needed, intact (nothing else is tried).
    cache : path, optional
        The cache folder; default ``<root>/`` :data:`CACHE_DIR`, none outside a checkout.
    download : bool
        Download the files the cache lacks from :func:`file_url`.
    root : path, optional
        The repository root; default :func:`~.source.repository_root` of the working directory.
    manifest : sequence of ManifestEntry, optional
        What the files must be; default :func:`read_manifest` of the checkout.
    timeout : float
        Seconds each download may wait.

    Returns
    -------
    pathlib.Path
        An absolute path to a zip or a folder that :func:`verify_copy` accepted for those files.

    Raises
    ------
    ValueError
        A bad argument, or a copy that lacks a file or holds a wrong one (one line naming it).
    DataUnavailable
        No copy found (one line: what was tried, the environment variable and the address).
    """
    _check_arguments(setting, local, cache, download, root, timeout)
    top = Path(root).resolve() if root is not None else repository_root()
    if manifest is None:
        manifest = read_manifest(top / MANIFEST_PATH if top is not None else None)
    needed = _needed(manifest, setting)
    if not needed:
        raise ValueError(f"setting={setting!r}: the manifest lists no file of it")
    if local is not None:
        return _given(Path(local), "local", needed)
    if os.environ.get(LME_ENV):
        return _given(Path(os.environ[LME_ENV]), f"${LME_ENV}", needed)
    tried = [f"${LME_ENV} (unset)"]
    folder = Path(cache) if cache is not None else (top / CACHE_DIR if top is not None else None)
    missing = _cached(folder, needed) if folder is not None else list(needed)
    if folder is not None and not missing:
        return folder.resolve()
    if folder is not None:
        tried.append(f"cache {folder} ({len(missing)} of {len(needed)} files absent)")
    if not download:
        tried.append("no download (download=False)")
    elif os.environ.get(OFFLINE_ENV) == "1":
        tried.append(f"no download (${OFFLINE_ENV}=1)")
    elif folder is None:
        tried.append("no download (no cache folder outside a checkout)")
    else:
        for entry in missing:
            failure = _download(entry, folder, float(timeout))
            if failure is not None:
                tried.append(f"download {file_url(entry.file)} ({failure})")
                break
        else:
            return folder.resolve()
    if top is not None:
        shared = top / SHARED_COPY
        if shared.is_file():
            return verify_copy(shared.resolve(), needed)
        tried.append(f"local copy {shared} (absent)")
    raise DataUnavailable(
        f"no copy of LongMemEval ({len(needed)} files): tried {', '.join(tried)}; set {LME_ENV} to a copy "
        f"(a zip of {MEMBER_FOLDER}<file> or a folder) or let the files download from "
        f"{file_url('<file>')}"
    )
