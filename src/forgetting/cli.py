"""``forgetting`` command line: run a chapter, verify published results, build the book.

    forgetting run decay-headline -p n_seeds 10     # one chapter, one changed parameter
    forgetting verify                               # rerun all at published parameters, diff
    forgetting build [--quick]                      # execute every chapter, render the site
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from typing import Any, Sequence

import yaml

from . import pipeline
from .book import repo_root
from .chapters import chapter_names, spec


def _parse_value(text: str) -> Any:
    """Read a ``-p`` value the way papermill does (YAML: 3, 0.2, true, [1, 5])."""
    return yaml.safe_load(text)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="forgetting", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="execute one chapter with papermill")
    run.add_argument("chapter", choices=chapter_names())
    run.add_argument("-p", "--parameter", nargs=2, action="append", default=[],
                     metavar=("NAME", "VALUE"), help="override a parameter (repeatable)")
    run.add_argument("--quick", action="store_true", help="use the chapter's smoke-test size")

    verify = commands.add_parser("verify", help="rerun chapters at published parameters and compare")
    verify.add_argument("chapters", nargs="*", help="default: every chapter")
    verify.add_argument("--update", action="store_true",
                        help="replace data/results with the new results when they differ")

    build = commands.add_parser("build", help="execute every chapter and build the site")
    build.add_argument("--quick", action="store_true", help="smoke-test sizes (never published)")
    build.add_argument("--no-execute", action="store_true", help="only render what was executed")

    args = parser.parse_args(argv)
    root = repo_root()
    try:
        if args.command == "run":
            overrides = {name: _parse_value(value) for name, value in args.parameter}
            spec(args.chapter).validate(overrides)  # fail before any kernel starts
            result = pipeline.run_chapter(root, args.chapter, overrides, quick=args.quick,
                                          progress=sys.stderr.isatty())
            print(f"{args.chapter}: executed in {result.seconds:.1f} s -> "
                  f"{pipeline.executed_dir(root) / (args.chapter + '.ipynb')}")
            for path in result.staged:
                print(f"  staged {path.relative_to(root)}")
            if result.published:
                print("  (published parameters: `forgetting verify` compares these with data/results)")
            return 0
        if args.command == "verify":
            return _verify(root, args.chapters or chapter_names(), args.update)
        if not args.no_execute:
            runs = pipeline.run_all(root, quick=args.quick, publish=not args.quick)
            print(pipeline.timing_table(runs))
        pipeline.build_site(root)
        print(f"site: {root / '_build' / 'html' / 'index.html'}")
        return 0
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as error:
        print(f"error: {error.cmd[0]} failed with exit code {error.returncode}", file=sys.stderr)
        return 1


def _verify(root: Any, names: Sequence[str], update: bool) -> int:
    runs, status, failed = [], {}, False
    for index, name in enumerate(names, 1):
        print(f"[{index}/{len(names)}] verifying {name} ...", flush=True)
        try:
            run = pipeline.run_chapter(root, name)
        except Exception as error:  # a failing chapter is a verification result, not a crash
            print(f"  {name}: failed: {error}".splitlines()[0])
            runs.append(pipeline.ChapterRun(name, 0.0, [], False))
            status[name], failed = "FAILED", True
            continue
        problems = pipeline.compare(root, run)
        for problem in problems:
            print(f"  {problem}")
        if problems and update:
            pipeline.promote(root, run)
            status[name] = "updated"
        else:
            status[name] = "DIFFERS" if problems else "identical"
            failed = failed or bool(problems)
        runs.append(run)
    print(pipeline.timing_table(runs, status))
    return 1 if failed else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
