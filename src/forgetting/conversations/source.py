"""Where the LoCoMo zip comes from, and the checks every copy passes before it is used.

The data is ``data/locomo10.zip`` of github.com/snap-research/locomo at commit ``e76cdff``
(:data:`LOCOMO_URL`, pinned to the commit), whose SHA-256 is :data:`LOCOMO_SHA256`. The
repository states no licence for it, so the project never commits the zip or anything taken
out of it: a downloaded copy is kept in the git-ignored :data:`CACHE_DIR`.

:func:`locomo_zip` returns the first of these that exists, and checks it:

1. the ``local`` argument; 2. the file named by the environment variable :data:`LOCOMO_ENV`;
3. ``<cache>/locomo10.zip`` (default ``cache``: ``<root>/`` :data:`CACHE_DIR`); 4. a download
from :data:`LOCOMO_URL` into the cache (``download=True`` and :data:`OFFLINE_ENV` not ``1``, a
few seconds' timeout); 5. the copy
beside the project, ``<root>/`` :data:`SHARED_COPY`.

A copy is used only if :func:`verify_zip` accepts it: it is a regular file of at most
:data:`MAX_BYTES` (:func:`open_regular`: a FIFO or a device such as ``/dev/zero`` is refused
before it is read or waited on), its streamed SHA-256 is the expected one, it opens as a zip,
every expected member is in it and every member's CRC is right. A refused ``local``,
environment-variable, downloaded or beside-the-project copy raises a one-line ``ValueError``
naming it (nothing is cached), and so does a ``local`` or environment-variable path that does not
exist or is not a regular file: a copy the user named is never passed over as "no copy". A refused
cached copy is passed over (an older pin, a damaged disk) and replaced by the next download. When
no copy is found (none named, none cached, none downloaded, none beside the project),
:class:`DataUnavailable` says in one line what was tried and how to get the data.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import re
import urllib.request
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, BinaryIO

from .. import safeio
from .._validate import bool_problem, is_real, raise_problems, shown

__all__ = [
    "CACHE_DIR",
    "DOWNLOAD_TIMEOUT",
    "LOCOMO_ENV",
    "LOCOMO_FILE",
    "LOCOMO_FOLDER",
    "LOCOMO_MEMBERS",
    "LOCOMO_SHA256",
    "LOCOMO_URL",
    "MAX_BYTES",
    "OFFLINE_ENV",
    "SHARED_COPY",
    "DataUnavailable",
    "expected_problems",
    "file_sha256",
    "locomo_zip",
    "open_regular",
    "open_zip",
    "repository_root",
    "verify_zip",
]

#: The upstream file, pinned to commit e76cdff4 of snap-research/locomo.
LOCOMO_URL = (
    "https://github.com/snap-research/locomo/raw/e76cdff4a04fce19090596d49862fe87a5c15aaa/data/locomo10.zip"
)
#: SHA-256 of that file (627 KB).
LOCOMO_SHA256 = "5c342973da4b45c12583c9fc7594d6410880f5aba2c491a0db09db262c906fb5"
#: The environment variable that names a local copy of the zip.
LOCOMO_ENV = "FORGETTING_LOCOMO"
#: The environment variable that, set to ``1``, forbids the download (a build that must not
#: reach the network, or a test of a machine without it).
OFFLINE_ENV = "FORGETTING_OFFLINE"
#: The name of the zip (in the cache and beside the project).
LOCOMO_FILE = "locomo10.zip"
#: The folder inside the zip that holds the conversations.
LOCOMO_FOLDER = "data/multimodal_dialog/locomo10_v2/"
#: The ten conversation files inside the zip, in the order they are loaded.
LOCOMO_MEMBERS = tuple(f"{LOCOMO_FOLDER}{n}.json" for n in (26, 30, 41, 42, 43, 44, 47, 48, 49, 50))
#: The cache folder, relative to the repository root (git-ignored, as all of ``.cache/``).
CACHE_DIR = Path(".cache") / "locomo"
#: The local copy beside the project, relative to the repository root.
SHARED_COPY = Path("..") / "shared" / "data" / "locomo" / LOCOMO_FILE
#: Seconds a download may wait for the server before giving up.
DOWNLOAD_TIMEOUT = 5.0
#: The largest copy read or downloaded (16 MiB, about 26 times the 627 KB zip): a download or a
#: file larger than this is refused before it fills the disk or the memory.
MAX_BYTES = 16 << 20

_CHUNK = 1 << 16
_HEX64 = re.compile(r"[0-9a-f]{64}")


class DataUnavailable(FileNotFoundError):
    """No copy of the LoCoMo zip was found; the message (one line) says where it looked and how
    to get the data."""


def repository_root(start: Path | None = None) -> Path | None:
    """The nearest folder at or above ``start`` (default: cwd) with ``_config.yml`` and ``book/``.

    The same rule as the book's own, without importing it; ``None`` outside a checkout.
    """
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "_config.yml").is_file() and (folder / "book").is_dir():
            return folder
    return None


def open_regular(path: Path | str, name: str = "path", limit: int | None = MAX_BYTES) -> BinaryIO:
    """:func:`forgetting.safeio.open_regular` with :data:`MAX_BYTES` as the default ``limit``: a
    FIFO, a device, a socket or a folder is refused before a byte is read, and so is a file too
    large to be the zip."""
    return safeio.open_regular(path, name, limit)


def _handle_sha256(handle: IO[bytes], limit: int | None, label: object) -> str:
    digest = hashlib.sha256()
    total = 0
    while block := handle.read(_CHUNK):
        total += len(block)
        if limit is not None and total > limit:  # grew after it was opened
            raise ValueError(f"{label}: more than {limit} bytes; refusing it")
        digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """SHA-256 hex digest of a regular file (:func:`open_regular`, no size bound), read in chunks
    (never whole into memory)."""
    with open_regular(path, limit=None) as handle:
        return _handle_sha256(handle, None, path)


def digest_message(label: object, found: str, expected: str) -> str:
    """The one-line refusal of a copy whose SHA-256 is ``found`` instead of ``expected``."""
    return (
        f"{label}: SHA-256 is {found[:16]}..., expected {expected[:16]}...; refusing it "
        "(not the pinned LoCoMo zip, or damaged)"
    )


def open_zip(source: Path | IO[bytes], label: object, members: Sequence[str]) -> zipfile.ZipFile:
    """``source`` opened as a zip that holds every name of ``members`` with correct CRCs.

    Raises
    ------
    ValueError
        One line naming ``label``: not a readable zip (e.g. truncated), a member missing, a bad CRC.
    """
    archive = None
    try:
        archive = zipfile.ZipFile(source)
        bad = archive.testzip()
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as error:
        if archive is not None:
            archive.close()
        raise ValueError(
            f"{label}: not a readable zip ({' '.join(str(error).split())}); refusing it"
        ) from None
    names = set(archive.namelist())
    missing = [name for name in members if name not in names]
    if bad is not None:
        archive.close()
        raise ValueError(f"{label}: member {bad!r} is damaged (bad CRC); refusing it")
    if missing:
        archive.close()
        raise ValueError(f"{label}: {len(missing)} member(s) missing, first {missing[0]!r}; refusing it")
    return archive


def verify_zip(
    path: Path, sha256: str = LOCOMO_SHA256, members: Sequence[str] = LOCOMO_MEMBERS, label: object = None
) -> Path:
    """Return ``path`` if it is the expected zip: a regular file of at most :data:`MAX_BYTES`
    (:func:`open_regular`), SHA-256 ``sha256``, and :func:`open_zip` accepts it.

    The file is opened once: the bytes hashed are the bytes opened as a zip.

    Raises
    ------
    FileNotFoundError
        Nothing at ``path``.
    ValueError
        Not a regular file (a FIFO, a device), over :data:`MAX_BYTES`; or one line naming
        ``label`` (default: ``path``) and, for a wrong digest, both digests cut.
    """
    with open_regular(path) as handle:
        found = _handle_sha256(handle, MAX_BYTES, label or path)
        if found != sha256:
            raise ValueError(digest_message(label or path, found, sha256))
        handle.seek(0)
        open_zip(handle, label or path, members).close()
    return path


def _check_arguments(
    local: object,
    cache: object,
    download: object,
    root: object,
    sha256: object,
    members: object,
    timeout: object,
) -> None:
    problems = [bool_problem("download", download)]
    for name, value in (("local", local), ("cache", cache), ("root", root)):
        if value is not None and not isinstance(value, (str, os.PathLike)):
            problems.append(f"{name} must be a path or None, got {shown(value)}")
    problems += expected_problems(sha256, members)
    if not is_real(timeout) or not 0 < float(timeout) <= 60:  # type: ignore[arg-type]
        problems.append(f"timeout must be seconds in (0, 60], got {shown(timeout)}")
    raise_problems(problems)


def expected_problems(sha256: object, members: object) -> list[str]:
    """The sentences saying why ``sha256`` (64 lowercase hex digits) or ``members`` (a non-empty
    sequence of non-empty names, not one string) is not allowed; ``[]`` if both are."""
    problems = []
    if not isinstance(sha256, str) or not _HEX64.fullmatch(sha256):
        problems.append(f"sha256 must be 64 lowercase hexadecimal digits, got {shown(sha256)}")
    if (
        isinstance(members, str)
        or not isinstance(members, Sequence)
        or not members
        or not all(isinstance(m, str) and m for m in members)
    ):
        problems.append(f"members must be a non-empty sequence of member names, got {shown(members)}")
    return problems


def _given(path: Path, what: str, sha256: str, members: Sequence[str]) -> Path:
    """The copy the user named (``what``: ``local`` or the variable), checked; a path that does
    not exist or is not a regular file is an error (``ValueError``), never "no copy"."""
    try:
        open_regular(path, what).close()
    except FileNotFoundError as error:
        raise ValueError(f"{error}; refusing it (name a copy of {LOCOMO_FILE})") from None
    return verify_zip(path.resolve(), sha256, members)


def _download(url: str, target: Path, sha256: str, members: Sequence[str], timeout: float) -> str | None:
    """Download ``url`` to ``target`` atomically; ``None`` on success, else why the network failed.

    The bytes go to a temporary file beside ``target``, are checked by :func:`verify_zip` and only
    then renamed to ``target``; a refused download raises ``ValueError`` and leaves nothing.
    """

    def write(handle: Any) -> None:
        total = 0
        with urllib.request.urlopen(url, timeout=timeout) as response:
            while block := response.read(_CHUNK):
                total += len(block)
                if total > MAX_BYTES:
                    raise ValueError(f"{url}: more than {MAX_BYTES} bytes; refusing it (not the LoCoMo zip)")
                handle.write(block)

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = safeio.write_temp(target, write)
    except (OSError, http.client.HTTPException) as error:
        return f"{type(error).__name__}: {' '.join(str(error).split())}"[:160]
    try:
        verify_zip(temp, sha256, members, label=url)
        os.replace(temp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    return None


def locomo_zip(
    local: Path | None = None,
    cache: Path | None = None,
    download: bool = True,
    *,
    root: Path | None = None,
    sha256: str = LOCOMO_SHA256,
    members: Sequence[str] = LOCOMO_MEMBERS,
    url: str = LOCOMO_URL,
    timeout: float = DOWNLOAD_TIMEOUT,
) -> Path:
    """A checked copy of the LoCoMo zip: the first found of the order in the module docstring.

    Parameters
    ----------
    local : path, optional
        A copy to use; it must exist and pass the checks (nothing else is tried).
    cache : path, optional
        The cache folder; default ``<root>/`` :data:`CACHE_DIR`, none outside a checkout.
    download : bool
        Try :data:`LOCOMO_URL` when the cache holds no good copy (needs a cache folder).
    root : path, optional
        The repository root; default :func:`repository_root` of the working directory.
    sha256, members
        What the zip must be: its digest and the members it must hold (a test's own fixture
        passes its own).
    url, timeout
        Where to download from and how many seconds to wait.

    Returns
    -------
    pathlib.Path
        An absolute path to a zip that :func:`verify_zip` accepted.

    Raises
    ------
    ValueError
        A bad argument, or a copy that is not the expected zip (one line naming it).
    DataUnavailable
        No copy found (one line: what was tried, the environment variable and the URL).
    """
    _check_arguments(local, cache, download, root, sha256, members, timeout)
    if local is not None:
        return _given(Path(local), "local", sha256, members)
    if os.environ.get(LOCOMO_ENV):
        return _given(Path(os.environ[LOCOMO_ENV]), f"${LOCOMO_ENV}", sha256, members)
    tried = [f"${LOCOMO_ENV} (unset)"]
    top = Path(root).resolve() if root is not None else repository_root()
    folder = Path(cache) if cache is not None else (top / CACHE_DIR if top is not None else None)
    cached = folder / LOCOMO_FILE if folder is not None else None
    if cached is not None and cached.is_file():
        try:
            return verify_zip(cached.resolve(), sha256, members)
        except ValueError as error:
            tried.append(f"cache {cached} (refused: {str(error).split(': ', 1)[-1]})")
    elif cached is not None:
        tried.append(f"cache {cached} (absent)")
    if not download:
        tried.append("no download (download=False)")
    elif os.environ.get(OFFLINE_ENV) == "1":
        tried.append(f"no download (${OFFLINE_ENV}=1)")
    elif cached is None:
        tried.append("no download (no cache folder outside a checkout)")
    else:
        failure = _download(url, cached, sha256, members, float(timeout))
        if failure is None:
            return cached.resolve()
        tried.append(f"download {url} ({failure})")
    if top is not None:
        shared = top / SHARED_COPY
        if shared.is_file():
            return verify_zip(shared.resolve(), sha256, members)
        tried.append(f"local copy {shared} (absent)")
    raise DataUnavailable(
        f"no copy of the LoCoMo zip: tried {', '.join(tried)}; set {LOCOMO_ENV} to a copy of "
        f"{LOCOMO_FILE} (sha256 {sha256[:16]}...) or download it from {url}"
    )
