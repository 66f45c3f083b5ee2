"""``forgetting`` command line: run a chapter, verify published results, build the book.

    forgetting run decay-headline -p n_seeds 10     # one chapter, custom parameters -> _build/runs/
    forgetting run decay-headline --workers 2       # its seed sweeps on 2 local processes
    forgetting run decay-headline --scheduler tcp://HOST:8786   # ... or on a Dask cluster
    forgetting verify [CHAPTER ...] [--update]      # rerun at published parameters, compare (and publish)
    forgetting build [--quick] [--jobs N] [--no-execute]   # execute every chapter, render the site
    forgetting pdf                                  # print the built site into one PDF, offline
    forgetting publish --remote R [--branch B]      # push the built site with ghp-import
    forgetting params CHAPTER                       # a chapter's parameters: defaults, allowed values

Parameters are read exactly as papermill reads them: ``-p NAME VALUE`` (True/False/None,
then int, then float, else the string), ``-r NAME VALUE`` (raw string), ``-y YAML`` and
``-f FILE.yaml`` (YAML mappings, for lists); files, then YAML, then ``-p``, then ``-r``.
Every failure ends with one line on stderr and a non-zero exit (``--debug`` shows the
traceback): 1 a chapter, build or comparison failed; 2 bad input; 130 interrupted (Ctrl-C);
143 stopped by SIGTERM or SIGHUP.

A chapter whose external data is unavailable is *not rerun*: it shows its published results and
publishes nothing. ``build`` and ``run`` say so in one line and exit 0 (the book is complete);
``verify`` says it could not verify that chapter, and why, and exits 1: it did not check what
it was asked to check.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import __version__, pipeline
from .._validate import int_problem, raise_problems
from ..safeio import is_disk_full
from ..studies.executor import executor_spec, require_scheduler_reachable
from . import inputs, pdf, publish
from .chapters import chapter_names, spec
from .params import parameter_table
from .paths import default_output_dir, repo_root, site_source_dir
from .processes import Terminated, terminate_as_interrupt

EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 2, 130, 143
#: What a stopped command left, true at any moment: a chapter's published set changes in one
#: journaled step (completed by the next command if a kill split it), run folders are removed.
STOPPED_CLEANLY = "no chapter was left half-published and no run folder was left behind"
#: The errors of a write that the disk or its permissions refused.
WRITE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG)


def papermill_value(text: str) -> Any:
    """A ``-p`` value as papermill's command line reads it (``papermill.cli._resolve_type``)."""
    return inputs.papermill_value(text)


def _yaml_mapping(text: str, where: str) -> dict[str, Any]:
    """The mapping a ``-y`` text or a parameters file holds, read within :mod:`.inputs`' bounds."""
    return inputs.yaml_mapping(text, where)


def parameters(args: argparse.Namespace) -> dict[str, Any]:
    """Merge ``-f``, ``-y``, ``-p`` and ``-r`` in papermill's order, each file and text bounded
    (:func:`forgetting.pipeline.inputs.read_parameters`); ``ValueError`` names what fails."""
    return inputs.read_parameters(
        args.parameters_file, args.parameters_yaml, args.parameter, args.parameter_raw
    )


def _parser() -> argparse.ArgumentParser:
    parser = inputs.OptionValueParser(  # -p NAME -inf: papermill's -p takes any two words
        prog="forgetting",
        description=plain_text(__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks of failures")
    parser.add_argument("--version", action="version", version=f"forgetting {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)  # every subparser an OptionValueParser

    run = commands.add_parser("run", help="execute one chapter with papermill")
    run.add_argument("chapter", type=inputs.chapter_word, choices=chapter_names())
    run.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="a parameter, read as papermill reads -p (repeatable)",
    )
    run.add_argument(
        "-r",
        "--parameter-raw",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="a parameter taken as a raw string",
    )
    run.add_argument(
        "-y",
        "--parameters-yaml",
        action="append",
        default=[],
        metavar="YAML",
        help="parameters as a YAML mapping, e.g. -y 'noise_levels: [1, 5]'",
    )
    run.add_argument(
        "-f",
        "--parameters-file",
        action="append",
        default=[],
        metavar="FILE",
        help="parameters from a YAML file",
    )
    run.add_argument("--quick", action="store_true", help="use the chapter's smoke-test size")
    run.add_argument(
        "-o",
        "--output",
        default=None,
        help="a new folder (or one an earlier run wrote) for the executed notebook, results and "
        "figures (default _build/runs/CHAPTER); published files and folders are never touched",
    )
    where = run.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=_int_or_text,
        default=None,
        metavar="N",
        help="run the chapter's seed sweeps on N local processes (results are identical)",
    )
    where.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:PORT",
        help="run the chapter's seed sweeps on the Dask cluster of this scheduler (results are identical)",
    )

    verify = commands.add_parser("verify", help="rerun chapters at published parameters and compare")
    verify.add_argument("chapters", nargs="*", help="default: every chapter")
    verify.add_argument(
        "--update",
        action="store_true",
        help="replace the published set of a chapter whose new results differ",
    )

    build = commands.add_parser("build", help="execute every chapter, publish, and build the site")
    build.add_argument("--quick", action="store_true", help="smoke-test sizes (never published)")
    build.add_argument("--no-execute", action="store_true", help="only render what was executed")
    build.add_argument(
        "--jobs",
        type=_int_or_text,
        default=os.cpu_count() or 1,
        metavar="N",
        help="chapters executed at once, each in its own process (default: the number of cores)",
    )

    params = commands.add_parser("params", help="list a chapter's parameters, defaults and allowed values")
    params.add_argument("chapter", type=inputs.chapter_word, choices=chapter_names())

    commands.add_parser(
        "pdf", help="print the built site, in _toc.yml order, to _build/html/forgetting-book.pdf"
    )
    push = commands.add_parser(
        "publish", help="push the built site (_build/html) to a branch with ghp-import"
    )
    push.add_argument("--remote", required=True, help="a remote of this clone, a URL or a repository path")
    push.add_argument("--branch", default="gh-pages", help="the branch to publish to (default gh-pages)")
    return parser


def _int_or_text(text: str) -> int | str:
    """An option's int, or its text unchanged so that validation names the bad value."""
    try:
        return int(text)
    except ValueError:
        return text


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        with terminate_as_interrupt():
            return _dispatch(args)
    except KeyboardInterrupt:
        _fail(args, f"interrupted; {STOPPED_CLEANLY}")
        return EXIT_INTERRUPTED
    except Terminated as stop:
        _fail(args, f"stopped by {stop}; {STOPPED_CLEANLY}")
        return EXIT_TERMINATED
    except (ValueError, FileNotFoundError) as error:
        _fail(args, str(error))
        return EXIT_USAGE
    except (
        pipeline.ChapterFailed,
        pipeline.BuildFailed,
        publish.PublishFailed,
        pipeline.OutputFailed,
        pipeline.PublishIncomplete,
        pipeline.ResultsChanged,
    ) as error:
        _fail(args, str(error))
        return EXIT_FAILED
    except OSError as error:
        where = f" {str(error.filename)[:200]}" if error.filename else ""
        reason = "the disk is full" if is_disk_full(error) else (error.strerror or str(error))
        verb = "cannot write" if error.errno in WRITE_ERRORS else "failed on"
        _fail(args, f"{verb}{where}: {reason}; no chapter was left half-published")
        return EXIT_FAILED


def _fail(args: argparse.Namespace, message: str) -> None:
    if args.debug:
        traceback.print_exc()
    print(f"forgetting: error: {message}", file=sys.stderr)


def plain_text(text: str) -> str:
    """``text`` without reStructuredText's inline marks (````literal```` and ``*emphasis*``),
    as a terminal shows it."""
    return re.sub(r"\*([^*\s][^*]*)\*", r"\1", text.replace("``", ""))


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "params":  # the registry alone: no clone needed
        print(parameter_table(spec(args.chapter)))
        return 0
    try:
        root = repo_root()
    except FileNotFoundError as error:
        raise FileNotFoundError(f"{error}; run forgetting inside a clone of the project") from None
    for step in pipeline.recover(root):  # an interrupted publication is completed first
        print(f"forgetting: {step}", file=sys.stderr)
    pipeline.remove_orphans(root)  # the run folders of killed commands
    if args.command == "run":
        return _run(root, args)
    if args.command == "verify":
        names = args.chapters or chapter_names()
        for name in names:
            spec(name)  # unknown chapters fail before anything runs
        return _verify(root, names, args.update)
    if args.command == "pdf":
        print(f"pdf: {pdf.build_pdf(root)}")
        return 0
    if args.command == "publish":
        done = publish.publish(root, args.remote, args.branch)
        print(
            f"published {done.commit[:12]} to {args.branch} of {args.remote}"
            if done.pushed
            else f"{args.branch} of {args.remote} already holds this site ({done.commit[:12]}): nothing pushed"
        )
        return 0
    # more chapter processes than cores only slow a build down (and 100 000 stop the machine)
    raise_problems([int_problem("jobs", args.jobs, minimum=1, maximum=os.cpu_count() or 1)])
    if not args.no_execute:
        runs = pipeline.run_all(
            root,
            quick=args.quick,
            publish=not args.quick,
            echo=lambda text: print(text, flush=True),
            progress=True,
            jobs=args.jobs,
        )
        print(pipeline.timing_table(runs))
    print(f"site: {pipeline.build_site(root)}")
    if args.quick or args.no_execute:
        return 0
    changed = pipeline.committed_differences(root)
    if changed is None:
        print("published files: not a git checkout, so not compared with committed ones")
    elif changed:
        print(f"published files that now differ from the committed ones ({len(changed)}):")
        for line in changed:
            print(f"  {line}")
        if os.environ.get("CI"):  # a fresh clone that does not rebuild its results fails loudly
            raise pipeline.ResultsChanged(
                f"{len(changed)} published file(s) differ from the committed ones (listed above); "
                "in CI that is a failure: see `git diff data/results`"
            )
    else:
        print("published files: identical to the committed ones")
    return 0


def _run(root: Path, args: argparse.Namespace) -> int:
    overrides = parameters(args)
    executor = executor_spec(args.workers, args.scheduler)  # ValueError before any kernel
    if args.scheduler is not None:
        require_scheduler_reachable(args.scheduler)
    output = default_output_dir(root, args.chapter) if args.output is None else args.output
    # before any kernel: a folder no run owns is refused, and one another run holds
    with pipeline.claim_output(root, output):
        run = pipeline.run_chapter(
            root, args.chapter, overrides, quick=args.quick, progress=True, executor=executor
        )
        try:
            problems = pipeline.compare(root, run) if run.published else None
            output = pipeline.export(root, run, output)
        finally:
            if run.folder != output:
                run.discard()
    print(f"{args.chapter}: executed in {run.seconds:.1f} s -> {output}")
    if run.not_rerun is not None:
        print(f"  not rerun ({run.not_rerun}); the output shows the published results")
    if problems is not None:
        verdict = (
            "identical to the published files"
            if not problems
            else f"differs from the published files ({problems[0]}); {_advice(problems[0])}"
        )
        print(f"  published parameters: {verdict}")
    return 0


def _advice(problem: str) -> str:
    """What to do about a difference: publish a changed result, never float noise."""
    if "not a changed result" in problem:
        return "do not publish it (see the reproducibility page, 'Same bytes on another CPU')"
    return "`forgetting verify --update` publishes"


def _verify(root: Path, names: Sequence[str], update: bool) -> int:
    runs, status, failed = [], {}, False
    for index, name in enumerate(names, 1):
        print(f"[{index}/{len(names)}] verifying {name} ...", flush=True)
        try:
            run = pipeline.run_chapter(root, name, progress=True)
        except pipeline.ChapterFailed as error:  # a failing chapter is a result of verify
            print(f"  {error}")
            runs.append(pipeline.ChapterRun(name, 0.0, Path(), False))
            status[name], failed = "FAILED", True
            continue
        if run.not_rerun is not None:  # nothing was computed, so nothing can be said to reproduce
            print(f"  not verified: could not rerun ({run.not_rerun})")
            status[name], failed = "NOT RERUN", True
            try:
                pipeline.publish_run(root, run, results=False, site=True)
            finally:
                run.discard()
            runs.append(run)
            continue
        try:
            report = pipeline.file_report(root, run)
            for file_name, state in report:
                print(f"  {file_name}: {state}")
            problems = [f for f, state in report if state != pipeline.IDENTICAL]
            if problems and update:
                status[name] = "updated"
            else:
                status[name] = "DIFFERS" if problems else "identical"
                failed = failed or bool(problems)
            # the published set and the site's copy in one step; an identical run leaves a site
            # that shows the chapter alone, so that a built site stays current for `forgetting pdf`
            shown = (site_source_dir(root) / f"{name}.ipynb").is_file()
            if update and problems:
                pipeline.publish_run(root, run, results=True, site=True)
            elif not problems and not shown:
                pipeline.publish_run(root, run, results=False, site=True)
        finally:
            run.discard()
        runs.append(run)
    for path in pipeline.strays(root):
        print(f"  stray file in data/results (belongs to no chapter): {path.name}")
        failed = True
    print(pipeline.timing_table(runs, status))
    return EXIT_FAILED if failed else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
