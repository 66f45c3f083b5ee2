"""forgetting.pipeline.site: what the site serves besides the pages (stable file addresses) and
the list of figures it makes from the chapters' captions."""

from __future__ import annotations

import json

import pytest

from forgetting.pipeline.chapters import chapter_names
from forgetting.pipeline.paths import site_output_dir, site_source_dir
from forgetting.pipeline.site import (
    FIGURE_LIST_MARK,
    BuildFailed,
    figure_list,
    prepare_site,
    serve_stable_folders,
)

FIGURE = "```{{glue:figure}} {key}\n:name: fig-{key}\n{alt}\nCaption of {key}.\n```\n"


def write_notebooks(site, figures):
    """An executed notebook per chapter; ``figures`` maps a chapter to its figures' markdown."""
    site.mkdir(parents=True, exist_ok=True)
    for name in chapter_names():
        cells = [{"cell_type": "markdown", "metadata": {}, "source": text} for text in figures.get(name, [])]
        cells.append(
            {"cell_type": "code", "metadata": {}, "source": "", "outputs": [], "execution_count": None}
        )
        (site / f"{name}.ipynb").write_text(json.dumps({"cells": cells}))


def test_the_list_of_figures_has_one_line_per_figure_in_book_order(tmp_path):
    first, last = chapter_names()[0], chapter_names()[-1]
    write_notebooks(
        tmp_path,
        {
            last: [FIGURE.format(key="b", alt=":alt: The second")],
            first: [
                FIGURE.format(key="a", alt=":alt: The first")
                + "\n"
                + FIGURE.format(key="c", alt=":alt: Third")
            ],
        },
    )
    lines = figure_list(tmp_path).splitlines()
    links = " · ".join(f'<a href="figures/{first}-a.{e}">{e.upper()}</a>' for e in ("png", "pdf", "svg"))
    assert lines[0] == f"- {{numref}}`fig-a` ({{doc}}`{first}`): The first. {links}"
    assert [line.split("`")[1] for line in lines] == ["fig-a", "fig-c", "fig-b"]
    assert f"figures/{last}-b.svg" in lines[2]


def test_a_figure_without_alt_text_fails_the_build_by_name(tmp_path):
    name = chapter_names()[1]
    write_notebooks(tmp_path, {name: [FIGURE.format(key="x", alt="")]})
    with pytest.raises(BuildFailed, match=rf"figure {name}-x of {name}.ipynb needs both :name: and :alt:"):
        figure_list(tmp_path)


def test_the_site_copy_of_the_page_gets_the_list_once_every_chapter_is_executed(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "list-of-figures.md").write_text(f"# List of figures\n\n{FIGURE_LIST_MARK}\n")
    site = prepare_site(tmp_path)
    assert FIGURE_LIST_MARK in (site / "list-of-figures.md").read_text()  # nothing executed yet
    write_notebooks(site, {chapter_names()[0]: [FIGURE.format(key="a", alt=":alt: The first")]})
    page = (prepare_site(tmp_path) / "list-of-figures.md").read_text()
    assert FIGURE_LIST_MARK not in page and "{numref}`fig-a`" in page


def test_stable_folders_are_served_as_the_site_renders_them(tmp_path):
    source = site_source_dir(tmp_path)
    for folder, name in (("figures", "c-f.png"), ("results", "c-t.csv")):
        (source / folder).mkdir(parents=True)
        (source / folder / name).write_text(name)
    served = site_output_dir(tmp_path)
    (served / "results").mkdir(parents=True)
    (served / "results" / "gone.csv").write_text("an earlier build's")
    serve_stable_folders(tmp_path)
    assert (served / "figures" / "c-f.png").read_text() == "c-f.png"
    assert sorted(p.name for p in (served / "results").iterdir()) == ["c-t.csv"]
