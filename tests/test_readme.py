"""The README shows the book's own figure: the image it embeds is the published file, byte for byte."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_image_the_readme_embeds_is_a_published_figure() -> None:
    images = re.findall(r"!\[[^\]]+\]\(([^)]+\.png)\)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert images, "the README embeds no figure"
    for image in images:
        name = Path(image).name  # <chapter>-<figure>.png
        chapter = next(
            p.stem.removesuffix("-figures")
            for p in (ROOT / "data" / "results").glob("*-figures.json")
            if name.startswith(p.stem.removesuffix("-figures") + "-")
        )
        digests = json.loads((ROOT / "data" / "results" / f"{chapter}-figures.json").read_text())
        assert hashlib.sha256((ROOT / image).read_bytes()).hexdigest() == digests[name], (
            f"{image} is not the published {name}: copy it from a run at published parameters"
        )


def test_the_quickstart_runs_as_written() -> None:
    """The README's quickstart is a doctest: every line runs and prints what the README shows."""
    import doctest

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## Use it in your agent", 1)[1].split("```pycon\n", 1)[1].split("```", 1)[0]
    assert len(block.splitlines()) <= 25, "the quickstart is meant to be short"
    test = doctest.DocTestParser().get_doctest(block, {}, "README quickstart", "README.md", 0)
    assert len(test.examples) >= 10
    result = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test)
    assert result.failed == 0, result
