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
