"""Render the book: copy its pages next to the executed chapters and run ``jupyter-book build -W -n``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .chapters import chapter_names
from .paths import SITE_RESULTS, book_dir, site_output_dir, site_source_dir


class BuildFailed(RuntimeError):
    """``jupyter-book build`` failed; the message gives its first warning and the log file."""


#: What the site takes from ``book/`` besides the executed chapters.
SITE_PAGES = ("*.md", "references.bib", "images/*", "_static/*")
#: Folders of the site's source served as they are, at ``<site>/<folder>/<file>``: addresses
#: named for the file, which a citation can use (Sphinx's own downloads change with the content).
STABLE_FOLDERS = ("figures", SITE_RESULTS)
#: What the site takes from the repository's top folder, for download links (the cite page's).
ROOT_FILES = ("CITATION.cff",)


#: The line of ``book/list-of-figures.md`` that :func:`figure_list` replaces in the site's copy.
FIGURE_LIST_MARK = "<!-- forgetting: list of figures -->"
FIGURE_BLOCK = re.compile(r"```\{glue:figure\} (?P<key>\S+)\n(?P<options>(?::[^\n]*\n)*)", re.S)


def figure_list(site: Path) -> str:
    """One line per figure of the executed chapters, in the table of contents' order: its
    number (a reference to its ``:name:``), its chapter, its ``:alt:`` text and its files."""
    lines = []
    for name in chapter_names():
        notebook = json.loads((site / f"{name}.ipynb").read_text(encoding="utf-8"))
        for cell in notebook["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            for block in FIGURE_BLOCK.finditer("".join(cell["source"])):
                options = dict(re.findall(r"^:(\w+): ?(.*)$", block["options"], re.M))
                stem = f"{name}-{block['key']}"
                if not {"name", "alt"} <= set(options):
                    raise BuildFailed(
                        f"figure {stem} of {name}.ipynb needs both :name: and :alt: (it has {sorted(options)})"
                    )
                files = " · ".join(
                    f'<a href="figures/{stem}.{ext}">{ext.upper()}</a>' for ext in ("png", "pdf", "svg")
                )
                lines.append(f"- {{numref}}`{options['name']}` ({{doc}}`{name}`): {options['alt']}. {files}")
    return "\n".join(lines) + "\n"


def prepare_site(root: Path) -> Path:
    """Copy the book's pages, bibliography and images, and :data:`ROOT_FILES`, into the site's
    source folder; the list of figures gets its list (:func:`figure_list`)."""
    site = site_source_dir(root)
    sources = [(s, s.relative_to(book_dir(root))) for p in SITE_PAGES for s in sorted(book_dir(root).glob(p))]
    sources += [(root / name, Path(name)) for name in ROOT_FILES if (root / name).is_file()]
    for source, relative in sources:
        target = site / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        data = source.read_bytes()
        if relative == Path("list-of-figures.md") and all(
            (site / f"{n}.ipynb").is_file() for n in chapter_names()
        ):
            data = data.replace(FIGURE_LIST_MARK.encode(), figure_list(site).encode())
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
    return site


def version_line(root: Path) -> str:
    """``"forgetting 0.1.0, commit 1a2b3c4d5e6f"``: the package version and the checkout's
    commit (``"not a git checkout"`` outside one), as every page's footer shows it."""
    from .. import __version__

    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        done = None
    head = (done.stdout or "").strip() if done is not None and done.returncode == 0 else ""
    return f"forgetting {__version__}, {f'commit {head}' if head else 'not a git checkout'}"


def site_config(root: Path) -> Path:
    """The repository's ``_config.yml`` with :func:`version_line` added to every page's footer
    (``html.extra_footer``), written to ``_build/_config.site.yml`` for the build."""
    import html

    import yaml

    source = root / "_config.yml"
    if not source.is_file():
        raise BuildFailed(f"no _config.yml in {root}: the site is built with the repository's configuration")
    config = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
    page_html = config.setdefault("html", {})
    footer = f'<p class="forgetting-version">{html.escape(version_line(root))}</p>'
    page_html["extra_footer"] = str(page_html.get("extra_footer") or "") + footer
    target = root / "_build" / "_config.site.yml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return target


def build_site(root: Path, builder: str = "html") -> Path:
    """``jupyter-book build -W -n`` of the site's source folder, with the repository's
    ``_config.yml`` (plus the version line, :func:`site_config`) and ``_toc.yml``; its output
    goes to ``_build/jupyter-book.log``."""
    site = prepare_site(root)
    missing = [n for n in chapter_names() if not (site / f"{n}.ipynb").exists()]
    if missing:
        raise BuildFailed(
            f"no executed notebook for {', '.join(missing)}: run `forgetting build` "
            "(or `forgetting build --quick`) first"
        )
    command = [  # bound to this process: a killed build leaves no site build running
        sys.executable,
        "-m",
        "forgetting.studies._lifetime",
        str(os.getpid()),
        "--",
        str(Path(sys.executable).parent / "jupyter-book"),
        "build",
        str(site),
        "--path-output",
        str(root),
        "--config",
        str(site_config(root)),
        "--toc",
        str(root / "_toc.yml"),
        "-W",
        "-n",
        "--keep-going",
        "--builder",
        builder,
    ]
    env = {**os.environ, "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    log = root / "_build" / "jupyter-book.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as handle:
        code = subprocess.run(command, env=env, stdout=handle, stderr=subprocess.STDOUT).returncode
    if code:
        lines = re.sub(r"\x1b\[[0-9;]*m", "", log.read_text(errors="replace")).splitlines()
        first = next(
            (line for line in lines if "WARNING" in line or "ERROR" in line),
            lines[-1] if lines else "no output",
        )
        raise BuildFailed(f"jupyter-book build failed ({first.strip()}); full log: {log}")
    if builder == "html":
        serve_stable_folders(root)
    return site_output_dir(root, builder) / "index.html"


def serve_stable_folders(root: Path) -> None:
    """Copy each of :data:`STABLE_FOLDERS` of the site's source into the built site, replacing
    what an earlier build left there (so a file the site no longer renders is not served)."""
    for name in STABLE_FOLDERS:
        source, target = site_source_dir(root) / name, site_output_dir(root) / name
        shutil.rmtree(target, ignore_errors=True)
        if source.is_dir():
            shutil.copytree(source, target)
