"""Publish the built site to a Git branch (GitHub Pages) with ghp-import.

    forgetting publish --remote origin                 # _build/html -> origin's gh-pages branch
    forgetting publish --remote ../pages.git --branch site

Only a site that is complete and up to date is published: ``_build/html/index.html`` must exist
and every page of the table of contents must be newer than its source in ``_executed/site/`` (the
executed notebook, or the page copied from ``book/``). The commit is made by ghp-import in a
private scratch repository that first fetches the remote branch, so the project's own checkout
(its branches, index and files) is never touched, and history on the branch continues.
The commit holds the site and a ``.nojekyll`` file (GitHub
Pages must not run Jekyll on it: that hides ``_static/``). When the new tree is identical to what
the branch already holds, nothing is pushed: publishing twice without a rebuild is a no-op.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .paths import site_output_dir, site_source_dir

#: The whole book as one PDF, inside the site (``forgetting pdf``); the introduction links it.
PDF_NAME = "forgetting-book.pdf"

SCRATCH_REMOTE = "publish"  # the remote's name inside the scratch repository
DEFAULT_IDENTITY = ("forgetting publish", "forgetting@localhost")


class PublishFailed(RuntimeError):
    """Publishing (or printing the PDF) failed; the message is one line."""


class SiteNotReady(FileNotFoundError):
    """The built site is missing, incomplete or older than what was executed."""


@dataclass(frozen=True)
class TocPage:
    """One page of the table of contents.

    Attributes
    ----------
    file : str
        The ``file`` entry of ``_toc.yml`` (no suffix), e.g. ``mw-exp1``.
    part : str or None
        Caption of the part the page belongs to; None for the root page.
    """

    file: str
    part: str | None


@dataclass(frozen=True)
class Published:
    """What :func:`publish` did.

    Attributes
    ----------
    commit : str
        The commit the branch points to afterwards.
    pushed : bool
        False when the remote branch already held exactly this site (nothing was pushed).
    """

    commit: str
    pushed: bool


# --- the table of contents and the site ---------------------------------------------------------


def toc_pages(root: Path) -> list[TocPage]:
    """Pages of ``_toc.yml`` in reading order: the root page, then each part's chapters.

    Parameters
    ----------
    root : Path
        The book root (holds ``_toc.yml``).

    Returns
    -------
    list of TocPage
    """
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    pages = [TocPage(str(toc["root"]), None)]

    def walk(node: Any, part: str | None) -> Iterator[TocPage]:
        if isinstance(node, dict):
            part = node.get("caption", part)
            if "file" in node:
                yield TocPage(str(node["file"]).removesuffix(".ipynb").removesuffix(".md"), part)
            for key in ("parts", "chapters", "sections"):
                yield from walk(node.get(key, []), part)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item, part)

    pages.extend(walk({key: toc[key] for key in ("parts", "chapters") if key in toc}, None))
    return pages


def page_html(root: Path, page: TocPage) -> Path:
    """The built HTML file of a table-of-contents page."""
    return site_output_dir(root) / f"{page.file}.html"


def page_source(root: Path, page: TocPage) -> Path | None:
    """What a page is rendered from (``_executed/site/<file>.ipynb`` or ``.md``), if it exists."""
    for suffix in (".ipynb", ".md"):
        source = site_source_dir(root) / f"{page.file}{suffix}"
        if source.is_file():
            return source
    return None


def stale_pages(root: Path) -> list[str]:
    """Pages of the table of contents whose HTML is missing or older than their source.

    Parameters
    ----------
    root : Path
        The book root.

    Returns
    -------
    list of str
        ``_toc.yml`` entries to rebuild; empty when the site is up to date.
    """
    stale = []
    for page in toc_pages(root):
        html = page_html(root, page)
        source = page_source(root, page)
        if not html.is_file() or (source is not None and source.stat().st_mtime > html.stat().st_mtime):
            stale.append(page.file)
    return stale


def check_site(root: Path, with_pdf: bool = True) -> Path:
    """The site folder, if it is built and up to date.

    Parameters
    ----------
    root : Path
        The book root.
    with_pdf : bool, default True
        Also require the book's PDF, no older than any page (``forgetting pdf`` passes False).

    Returns
    -------
    Path
        ``<root>/_build/html``.

    Raises
    ------
    SiteNotReady
        No ``index.html``, a page missing or older than its source, or the book's PDF missing or
        older than a page.
    """
    site = site_output_dir(root)
    if not (site / "index.html").is_file():
        raise SiteNotReady(f"no built site in {site}: run `forgetting build` first")
    stale = stale_pages(root)
    if stale:
        raise SiteNotReady(
            f"the site in {site} is older than _executed/ ({len(stale)} page(s), "
            f"first {stale[0]}): run `forgetting build --no-execute` first"
        )
    if not with_pdf:
        return site
    pdf = site / PDF_NAME  # the introduction links it
    newest = max(page_html(root, page).stat().st_mtime for page in toc_pages(root))
    if not pdf.is_file() or pdf.stat().st_mtime < newest:
        state = "no" if not pdf.is_file() else "an older"
        raise SiteNotReady(f"the site in {site} has {state} {PDF_NAME}: run `forgetting pdf` first")
    return site


# --- git ----------------------------------------------------------------------------------------


def git(*args: str | Path, cwd: Path, env: dict[str, str] | None = None, check: bool = True) -> str:
    """Run git; its stripped stdout, or :class:`PublishFailed` with the line of git that says why."""
    done = subprocess.run(["git", *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True)
    if check and done.returncode:
        raise PublishFailed(
            f"git {args[0]} failed: {git_reason(done.stderr or done.stdout, done.returncode)}"
        )
    return done.stdout.strip() if done.returncode == 0 else ""


def git_reason(output: str, status: int) -> str:
    """The telling line of git's output: a rejected ref, else the first error, else the last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for wanted in (lambda line: "rejected]" in line, lambda line: line.startswith(("fatal:", "error:"))):
        found = next((line for line in lines if wanted(line)), None)
        if found:
            return found.removeprefix("fatal: ").removeprefix("error: ")
    return lines[-1] if lines else f"exit status {status}"


def remote_url(root: Path, remote: str) -> str:
    """A remote of the project's clone by name (``origin``) as its URL; a local path made absolute."""
    if (root / ".git").exists():
        url = git("remote", "get-url", remote, cwd=root, check=False)
        if url:
            return url
    path = Path(remote).expanduser()
    return str(path.resolve()) if path.exists() else remote


def identity(root: Path) -> tuple[str, str]:
    """Committer name and e-mail: the environment's, the project's git config, or a default."""
    name = os.environ.get("GIT_COMMITTER_NAME") or git("config", "user.name", cwd=root, check=False)
    email = os.environ.get("GIT_COMMITTER_EMAIL") or git("config", "user.email", cwd=root, check=False)
    return name or DEFAULT_IDENTITY[0], email or DEFAULT_IDENTITY[1]


def source_commit(root: Path) -> str | None:
    """The project's HEAD commit (short), if ``root`` is a git clone."""
    if not (root / ".git").exists():
        return None
    return git("rev-parse", "--short", "HEAD", cwd=root, check=False) or None


def ghp_import(site: Path, scratch: Path, branch: str, message: str, env: dict[str, str]) -> None:
    """Commit ``site`` plus ``.nojekyll`` to ``branch`` of the scratch repository with ghp-import."""
    script = (
        "import sys, ghp_import\n"
        "try:\n"
        "    ghp_import.ghp_import(sys.argv[1], remote=sys.argv[2], branch=sys.argv[3],\n"
        "                          mesg=sys.argv[4], nojekyll=True, push=False)\n"
        "except ghp_import.GhpError as error:\n"
        "    sys.exit(f'ghp-import: {error.message}')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(site), SCRATCH_REMOTE, branch, message],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
    )
    problem = (done.stderr.strip() or done.stdout.strip()).splitlines()
    # ghp-import reports a failed fast-import on stdout only, with exit status 0
    if done.returncode or "Failed to process commit" in done.stdout:
        raise PublishFailed(problem[-1] if problem else "ghp-import failed")


def publish(root: Path, remote: str, branch: str = "gh-pages") -> Published:
    """Push the built site of ``root`` to ``branch`` of ``remote`` with ghp-import.

    Parameters
    ----------
    root : Path
        The book root (``_build/html`` must be built and up to date).
    remote : str
        A remote of the project's clone (``origin``), a URL, or the path of a repository.
    branch : str, optional
        The branch to publish to (default ``gh-pages``); created if the remote lacks it.

    Returns
    -------
    Published
        The branch's commit, and whether anything was pushed (False: the remote already had it).

    Raises
    ------
    SiteNotReady
        The site is missing or stale.
    PublishFailed
        git or ghp-import failed (e.g. the remote is unreachable or rejects the push).
    """
    site = check_site(root)
    url = remote_url(root, remote)
    name, email = identity(root)
    env = {**os.environ, "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email, "GIT_TERMINAL_PROMPT": "0"}
    built_from = source_commit(root)
    message = f"Publish the book{f' built from {built_from}' if built_from else ''}"
    scratch = Path(tempfile.mkdtemp(prefix="forgetting-publish-"))
    try:
        git("init", "--quiet", cwd=scratch, env=env)
        git("remote", "add", SCRATCH_REMOTE, url, cwd=scratch, env=env)
        git("ls-remote", "--heads", SCRATCH_REMOTE, cwd=scratch, env=env)  # reachable at all?
        tracking = f"refs/remotes/{SCRATCH_REMOTE}/{branch}"
        git(
            "fetch",
            "--quiet",
            "--depth=1",
            SCRATCH_REMOTE,
            f"+refs/heads/{branch}:{tracking}",
            cwd=scratch,
            env=env,
            check=False,
        )  # a missing branch is created by the push
        before = git("rev-parse", "--verify", "--quiet", f"{tracking}^{{tree}}", cwd=scratch, check=False)
        ghp_import(site, scratch, branch, message, env)
        after = git("rev-parse", f"refs/heads/{branch}^{{tree}}", cwd=scratch)
        if before == after:
            return Published(git("rev-parse", tracking, cwd=scratch), pushed=False)
        git(
            "push",
            "--quiet",
            SCRATCH_REMOTE,
            f"refs/heads/{branch}:refs/heads/{branch}",
            cwd=scratch,
            env=env,
        )
        return Published(git("rev-parse", f"refs/heads/{branch}", cwd=scratch), pushed=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
