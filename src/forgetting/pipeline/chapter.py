"""What a chapter notebook needs: its parameters checked, values glued, figures and tables saved.

A chapter opens with ``chapter = book.open_chapter(NAME, globals())``: that
validates the parameters (including names papermill injected that the chapter
does not know, which papermill itself only warns about), and returns a
:class:`Chapter` that

* glues every number the prose shows and records it (``chapter.glue``),
* asserts a checked number when the run is at published parameters, saying where it comes
  from: a source (``chapter.check_source``), a formula or a regression pin (``chapter.check``),
* saves each figure as ``<run>/figures/<chapter>-<name>.{png,pdf,svg}`` in the house
  style, byte-identical between runs (``chapter.figure``),
* writes each table as ``<run>/results/<chapter>-<name>.csv`` (``chapter.table``),
* publishes every float, glued or in a table, at :data:`PUBLISHED_DIGITS` significant digits
  (:func:`published_value`: the one place a published float is rounded),
* and at the end writes ``<run>/results/<chapter>.json`` -- parameters, glued values,
  table digests and one digest over all of it (``chapter.save``).

A chapter that needs external data gets it from ``chapter.require_data``; without it the run is
not a rerun: it shows the published results, and the pipeline never publishes it.

``<run>`` is the private folder the pipeline gives this kernel (see
:func:`forgetting.pipeline.paths.chapter_run_dir`); run outside the pipeline (plain papermill or
Jupyter), a chapter writes to a private folder of its own, and ``chapter.save()`` replaces
``_build/runs/<chapter>/`` with that whole set (:class:`forgetting.pipeline.output.RunAlone`:
never a mix with another run's files; a folder holding anything else is refused when the
chapter opens). A chapter never writes to the
published ``data/results/`` or ``figures/``: only :mod:`forgetting.pipeline` promotes a
complete run at published parameters there.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO

from ..hashing import digest
from ..safeio import atomic_write
from ..studies.executor import Executor, executor_from_env
from .chapters import ChapterSpec, spec
from .output import RunAlone
from .params import command_value
from .paths import RUN_DIR_ENV, SITE_RESULTS, chapter_run_dir, repo_root, run_figures, run_results
from .values import csv_text, glue_value, publishable, published_value

STYLE = "forgetting.mplstyle"
FIGURE_FORMATS = ("png", "pdf", "svg")
ONE_COLUMN = (3.5, 2.6)  # inches: one column of a two-column paper
TWO_COLUMN = (7.2, 3.0)  # full text width
#: Where a checked number that is not a source's comes from, as the failure message says it.
CHECK_ORIGINS = {
    "derived": "derived from a formula, independently of the simulation:",
    "pin": "regression pin (this book's own earlier output, not a source's number):",
}


def use_style() -> None:
    """Apply the house matplotlib style (colour-blind-safe palette, embedded fonts)."""
    import matplotlib.pyplot as plt

    with resources.as_file(resources.files("forgetting") / STYLE) as path:
        plt.style.use(str(path))


def _injected_names() -> list[str]:
    """Names assigned in papermill's injected-parameters cell, if this kernel ran one."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - notebooks always have IPython
        return []
    shell = get_ipython()
    if shell is None:
        return []
    names: list[str] = []
    for source in shell.user_ns.get("In", []):
        if source.lstrip().startswith("# Parameters"):
            for node in ast.parse(source).body:
                if isinstance(node, ast.Assign):
                    names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names


def open_chapter(name: str, namespace: Mapping[str, Any]) -> Chapter:
    """Validate the chapter's parameters from ``namespace`` and start recording."""
    chapter_spec = spec(name)
    unknown = sorted(set(_injected_names()) - set(chapter_spec.defaults))
    if unknown:
        raise ValueError(
            f"chapter {name}: unknown parameter(s) {unknown}; allowed: {list(chapter_spec.defaults)}"
        )
    params = chapter_spec.validate({p: namespace[p] for p in chapter_spec.defaults})
    chapter = Chapter(chapter_spec, params)
    if not os.environ.get(RUN_DIR_ENV):  # plain papermill or Jupyter: a whole set, at save()
        chapter.alone = RunAlone(chapter.root, name)
        chapter.run_dir = chapter.alone.folder
    return chapter


class Chapter:
    """Records one chapter run: parameters, glued values, figures, tables."""

    def __init__(self, chapter_spec: ChapterSpec, params: dict[str, Any], root: Path | None = None):
        self.spec = chapter_spec
        self.name = chapter_spec.name
        self.params = params
        self.root = root or repo_root()
        self.run_dir = chapter_run_dir(self.root, self.name)
        self.values: dict[str, Any] = {}
        self.tables: dict[str, str] = {}
        self.figures: list[str] = []
        #: Why this run could not compute the chapter again (``None``: it did), see :meth:`require_data`.
        self.not_rerun: str | None = None
        #: A run outside the pipeline (:func:`open_chapter` sets it): its set, moved at :meth:`save`.
        self.alone: RunAlone | None = None
        use_style()

    @property
    def published(self) -> bool:
        """True when every parameter has its published (default) value."""
        return self.params == self.spec.defaults

    @functools.cached_property
    def executor(self) -> Executor:
        """What runs this chapter's seed sweeps: the choice of ``forgetting run --workers N`` or
        ``--scheduler ADDRESS`` (handed over in ``FORGETTING_EXECUTOR``), else this process.

        Not a parameter and never recorded: results are identical whatever runs them.
        """
        return executor_from_env()

    @property
    def command(self) -> str:
        """The command that reruns this chapter with these parameters."""
        changed = [command_option(k, v) for k, v in self.params.items() if v != self.spec.defaults[k]]
        return " ".join(["forgetting run", self.name, *changed])

    # --- external data, and the published results shown without it -------------
    def require_data(self, name: str) -> Path | None:
        """The verified path of data set ``name`` (declared in the spec's ``data``), or ``None``
        when no copy can be had: the run is then *not a rerun* (:attr:`not_rerun` holds the data
        source's one-line reason), a notice says so on the page, and the chapter shows its
        published results (:meth:`published_values`, :meth:`published_table`) instead.

        Only the data source's ``DataUnavailable`` is caught: any other error (a copy with the
        wrong digest, say) is raised. ``ValueError`` for a name the spec does not declare.
        """
        from IPython.display import Markdown, display

        from . import data

        if name not in self.spec.data:
            raise ValueError(
                f"chapter {self.name}: data set name={name!r} is not declared; allowed: "
                f"{list(self.spec.data)} (ChapterSpec.data in pipeline/chapters.py)"
            )
        try:
            return data.locate(name)
        except data.unavailable() as error:
            reason = " ".join(str(error).split())
            self.not_rerun = reason if self.not_rerun is None else f"{self.not_rerun}; {reason}"
            notice = data.not_rerun_notice(self.name, reason, self.published)
            display(Markdown(notice))  # type: ignore[no-untyped-call, unused-ignore]
            return None

    def published_values(self) -> dict[str, Any]:
        """The glued values of the committed record ``data/results/<chapter>.json``."""
        from .data import published_values

        return published_values(self.root, self.name)

    def published_table(self, name: str) -> Any:
        """The committed table ``data/results/<chapter>-<name>.csv`` as a DataFrame, which
        :meth:`table` writes back byte for byte (``ValueError`` for one it would not)."""
        from .data import published_table

        frame, text = published_table(self.root, self.name, name)
        if csv_text(frame) != text:
            raise ValueError(
                f"chapter {self.name}: table name={name!r} would not be written back as published"
            )
        return frame

    def note(self, text: str) -> None:
        """Show ``text`` (MyST, one line) where the cell's output goes: e.g. why a section is skipped."""
        from IPython.display import Markdown, display

        display(Markdown(text))  # type: ignore[no-untyped-call, unused-ignore]

    # --- numbers ------------------------------------------------------------
    def glue(self, key: str, value: Any) -> Any:
        """Glue ``value`` (as a plain int/float/str) for the prose and record it.

        Raises ``ValueError`` for a key glued before in this run: myst-nb keeps one value per key
        and a page, and the site build (``-W``) fails on the second, so a run refuses it at once.
        """
        from myst_nb import glue

        if key in self.values:
            raise ValueError(
                f"chapter {self.name}: key={key!r} is glued twice (first {self.values[key]!r}, now "
                f"{value!r}); a key is glued once per run"
            )
        plain = glue_value(value)
        self.values[key] = plain
        glue(key, _Text(plain) if isinstance(plain, str) else plain, display=False)
        return plain

    def check(self, key: str, expected: float, ndigits: int, *, origin: str, always: bool = False) -> None:
        """Assert ``round(values[key], ndigits) == expected`` (published runs, or ``always``).

        ``origin`` says where ``expected`` comes from, and the failure message says it too:
        ``"derived"`` (computed from a formula, independently of the simulation) or ``"pin"``
        (a regression pin: this book's own earlier output, not a number of either source).
        A source's number is checked with :meth:`check_source`, which reads it from
        ``data/published.yaml``.
        """
        if origin not in CHECK_ORIGINS:
            raise ValueError(f"origin={origin!r}; allowed: {sorted(CHECK_ORIGINS)} (sources: check_source)")
        if not (always or self.published):
            return
        got = round(self.values[key], ndigits)
        if got != expected:
            raise AssertionError(
                f"{self.name}: {key} = {self.values[key]!r} rounds to {got}; {CHECK_ORIGINS[origin]} {expected}"
            )

    def check_source(self, key: str, entry: str, *, value: Any = None, always: bool = False) -> None:
        """Assert that ``values[key]`` (or ``value``, named ``key``) reproduces the source's number
        ``entry`` of ``data/published.yaml``.

        Only entries with ``compare: exact`` can be asserted: ``round(value, digits) == published``.
        """
        from ..studies.published import load_published

        number = load_published()[entry]
        if number.compare != "exact":
            raise ValueError(f"entry={entry!r} has compare {number.compare!r}; check_source needs 'exact'")
        if not (always or self.published):
            return
        found = self.values[key] if value is None else value
        got = round(found, number.digits)
        if got != number.value:
            raise AssertionError(
                f"{self.name}: {key} = {found!r} rounds to {got}; the source ({number.source}, "
                f"{number.where}) publishes {number.text()} (data/published.yaml: {entry})"
            )

    # --- figures and tables ------------------------------------------------
    def figure(self, fig: Any, name: str) -> None:
        """Save ``fig`` as ``figures/<chapter>-<name>.{png,pdf,svg}`` and glue it as ``name``.

        A panel's legend that covers data is moved first (:func:`~forgetting.pipeline.legends.clear_legends`);
        a legend that still covers data fails a run at published parameters and warns in any
        other."""
        import matplotlib.pyplot as plt
        from myst_nb import glue

        from .boxes import saved_box
        from .legends import legends_off_the_data

        legends_off_the_data(fig, f"{self.name}-{name}", refuse=self.published)
        folder = run_figures(self.run_dir)
        folder.mkdir(parents=True, exist_ok=True)
        stem = folder / f"{self.name}-{name}"
        box = saved_box(fig)
        for fmt in FIGURE_FORMATS:
            metadata = {
                "png": {"Software": None},
                "pdf": {"CreationDate": None, "Creator": None, "Producer": None},
                "svg": {"Date": None, "Creator": None},
            }[fmt]
            atomic_write(stem.with_suffix(f".{fmt}"), _saver(fig, fmt, metadata, box))
        self.figures.append(stem.name)
        glue(name, fig, display=False)
        plt.close(fig)

    def table(self, rows: Sequence[Mapping[str, Any]] | Any, name: str) -> Any:
        """Write ``rows`` (or a DataFrame) as ``<chapter>-<name>.csv`` in the run folder; return a
        DataFrame (for the cell's own use: a cell never ends with it, :meth:`show_table` shows a table)."""
        import pandas as pd

        frame = publishable(rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows)))
        text = csv_text(frame)
        folder = run_results(self.run_dir)
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / f"{self.name}-{name}.csv", lambda handle: handle.write(text.encode()))
        self.tables[name] = hashlib.sha256(text.encode()).hexdigest()
        return frame

    def show_table(
        self,
        rows: Sequence[Mapping[str, Any]] | Any,
        name: str,
        caption: str,
        *,
        publish: bool = True,
        **formats: Any,
    ) -> Any:
        """Publish ``rows`` as :meth:`table` does and show them as the book's numbered table
        ``#table-<chapter>-<name>``, captioned, with a link to the CSV (:mod:`.tables`; ``formats``
        go to :func:`~forgetting.pipeline.tables.myst_table`). Cells show the published values.

        With ``publish=False`` the rows are only shown, as a view of table ``name``, which this
        run must have published already (the link goes to its CSV)."""
        from IPython.display import Markdown

        from .tables import myst_table, rows_of

        if publish:
            self.table(rows, name)
        elif name not in self.tables:
            raise ValueError(
                f"table {name!r} was not published by this run; published: {sorted(self.tables)}"
            )
        columns, cells = rows_of(rows)
        shown = [dict(zip(columns, (published_value(v) for v in row))) for row in cells]
        text = myst_table(
            shown,
            label=f"table-{self.name}-{name}",
            caption=caption,
            csv=f"{SITE_RESULTS}/{self.name}-{name}.csv",
            **formats,
        )
        return Markdown(text)  # type: ignore[no-untyped-call, unused-ignore]

    # --- the record ----------------------------------------------------------
    def record(self) -> dict[str, Any]:
        """Parameters (as :meth:`~.params.ChapterSpec.recorded` keeps them), glued values, table
        digests and one digest over them; a run that was not a rerun (:meth:`require_data`) adds
        ``"rerun": false`` and its ``"reason"`` (only then, so the record of a rerun is what it
        always was)."""
        body: dict[str, Any] = {
            "chapter": self.name,
            "published_parameters": self.published,
            "parameters": self.spec.recorded(self.params),
            "values": self.values,
            "tables": self.tables,
        }
        if self.not_rerun is not None:
            body.update(rerun=False, reason=self.not_rerun)
        return {**body, "digest": digest(body)}

    def save(self) -> Path:
        """Write ``<chapter>.json`` (sorted keys, newline-terminated) into the run's results."""
        folder = run_results(self.run_dir)
        folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.record(), indent=2, sort_keys=True) + "\n"
        path = folder / f"{self.name}.json"
        atomic_write(path, lambda handle: handle.write(text.encode()))
        if self.alone is not None:  # outside the pipeline: the whole set replaces the output folder
            path = run_results(self.alone.finish(self.run_dir)) / path.name
            self.run_dir = self.alone.folder
        return path

    def reproduce_box(self) -> Any:
        """A MyST admonition with the command and parameters of this very run."""
        from IPython.display import Markdown

        rows = "\n".join(
            f"| `{k}` | `{command_value(v)}` | {self.spec.param(k).help} |" for k, v in self.params.items()
        )
        return Markdown(  # type: ignore[no-untyped-call, unused-ignore]
            f":::{{admonition}} Reproduce this chapter\n:class: tip\n\n"
            f"```bash\n{self.command}\n```\n\n"
            f"or, with papermill alone, `papermill book/{self.name}.ipynb /tmp/{self.name}.ipynb -k python3 "
            f"--cwd book -p NAME VALUE` (lists with `-y`). This page ran with:\n\n"
            f"| parameter | value | meaning |\n|---|---|---|\n{rows}\n\n"
            f"Environment: {environment(self.root)}.\n:::\n"
        )


#: The packages whose versions a chapter page names (result files carry none).
ENVIRONMENT_PACKAGES = ("numpy", "scipy", "pandas", "matplotlib", "papermill")


def environment(root: Path) -> str:
    """Python, the versions of :data:`ENVIRONMENT_PACKAGES` and the sha256 of the lock file, in words."""
    import platform
    from importlib import metadata

    versions = ", ".join(f"{name} {metadata.version(name)}" for name in ENVIRONMENT_PACKAGES)
    lock = root / "requirements" / "lock.txt"
    locked = (
        f"`requirements/lock.txt` sha256 {hashlib.sha256(lock.read_bytes()).hexdigest()[:12]}…"
        if lock.is_file()
        else "no lock file"
    )
    python = f"{platform.python_implementation()} {platform.python_version()} on {platform.system()}"
    return f"{python}, {versions}; {locked}"


def _saver(fig: Any, fmt: str, metadata: dict[str, Any], box: Any) -> Callable[[BinaryIO], None]:
    """Save ``fig`` as ``fmt`` to a handle, a PDF with its numbers at the SVG's precision
    (:func:`~forgetting.pipeline.boxes.vector_precision`)."""
    from .boxes import vector_precision

    def save(handle: BinaryIO) -> None:
        with vector_precision():
            fig.savefig(handle, format=fmt, metadata=metadata, bbox_inches=box)

    return save


def command_option(name: str, value: Any) -> str:
    """The option that gives ``value`` back through the command line (``-p`` as papermill
    reads it; lists, which ``-p`` cannot carry, as ``-y 'name: [...]'``)."""
    if isinstance(value, list):
        return f"-y {shlex.quote(f'{name}: {command_value(value)}')}"
    return f"-p {name} {shlex.quote(command_value(value))}"


class _Text(str):
    """A string whose text/plain form is what ``{glue:text}`` shows, character for character.

    myst-nb passes the text/plain form through ``ast.literal_eval`` first, so a bare ``5, 10, 20``
    would come out as the tuple ``(5, 10, 20)``: text that Python would read as a literal is
    given quoted (``literal_eval`` takes the quotes off again), any other text bare.
    """

    def __repr__(self) -> str:
        text = str(self)
        try:
            ast.literal_eval(text)
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            return text
        return repr(text)
