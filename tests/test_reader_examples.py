"""The papermill commands that README.md and the reproducibility page show run as printed and leave
the repository as it was: the executed notebook goes outside it, results under git-ignored _build/."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import copy_book
from forgetting.pipeline.chapters import spec

ROOT = Path(__file__).resolve().parents[1]
PAGES = (ROOT / "README.md", ROOT / "book" / "reproducibility.md")
pytestmark = pytest.mark.book


def papermill_examples() -> list[str]:
    """Every line of a bash block in the reader pages that runs papermill."""
    lines = []
    for page in PAGES:
        for block in re.findall(r"```bash\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S):
            lines += [
                line.split("  #")[0].strip() for line in block.splitlines() if "papermill book/" in line
            ]
    return lines


def test_the_pages_show_papermill_examples_that_write_outside_the_repository() -> None:
    examples = papermill_examples()
    assert len(examples) >= 3
    for line in examples:
        output = shlex.split(line)[2]
        assert output.startswith("/tmp/"), line
    assert any(" -y " in line for line in examples), "a list parameter needs -y with papermill"


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "_build" not in p.parts}


@pytest.mark.parametrize("line", papermill_examples())
def test_a_papermill_example_runs_and_leaves_the_repository_clean(line: str, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    copy_book(root)
    before = _files(root)
    words = shlex.split(line)
    chapter = Path(words[1]).stem
    output = tmp_path / "outside" / Path(words[2]).name
    output.parent.mkdir()
    words[0], words[2] = str(Path(sys.executable).parent / "papermill"), str(output)
    given = {words[i + 1] for i, word in enumerate(words) if word == "-p"}
    # smoke sizes for the parameters the example leaves alone (-p comes after -y in papermill)
    for param in spec(chapter).params:
        if param.quick is not None and param.name not in given and not isinstance(param.quick, list):
            words += ["-p", param.name, str(param.quick)]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(words, cwd=root, capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    if "--engine forgetting" in line:  # the kernel's channels are encrypted: ipykernel has no notice
        assert "without encryption" not in result.stderr, result.stderr[-3000:]
    assert output.is_file()
    assert _files(root) == before  # nothing new or removed outside _build/
    assert (root / "_build" / "runs" / chapter / "results" / f"{chapter}.json").is_file()
