"""Shared fixtures: one smoke build of the whole book in a scratch copy of the repository."""

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK_FILES = ("_config.yml", "_toc.yml", "book", "data")


def copy_book(target: Path) -> Path:
    """Copy what a book build reads into ``target`` (the package itself is installed)."""
    for name in BOOK_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name)
        elif source.exists():
            shutil.copy2(source, target / name)
    return target


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    """Every chapter executed at quick parameters, then ``jupyter-book build -W -n``."""
    from forgetting import pipeline

    root = copy_book(tmp_path_factory.mktemp("book"))
    runs = pipeline.run_all(root, quick=True, publish=True)
    pipeline.build_site(root)
    return root, runs
