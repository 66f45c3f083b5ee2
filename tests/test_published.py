"""The published-numbers file: validation, and no stray copy of a paper number anywhere else."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from forgetting.pipeline.chapters import CHAPTERS
from forgetting.studies import published

ROOT = Path(__file__).resolve().parents[1]
GOOD = (ROOT / "data" / "published.yaml").read_text(encoding="utf-8")


def _stray_pattern() -> re.Pattern[str]:
    """Every paper number as the paper prints it: values at their digits, spreads after "±".

    ``0.00`` and whole numbers (3000 episodes) are too common to search for; they are read
    from the file where they are used, but cannot be policed by text. A bare spread
    (``0.02``) is too common too (plot offsets), so it is searched only after ``±``, ``\\pm``
    or ``+-``.
    """
    values, spreads = set(), set()
    for entry in published.load_published().values():
        if entry.source != "paper" or entry.digits == 0:
            continue
        if entry.value != 0:
            values.add(f"{abs(entry.value):.{entry.digits}f}")
        if entry.spread is not None:
            spreads.add(f"{entry.spread:.{entry.digits}f}")
    value_part = r"(?<![\d.])(" + "|".join(re.escape(v) for v in sorted(values)) + r")(?!\d)"
    spread_part = r"(±|\\pm|\+-)\s*(" + "|".join(re.escape(v) for v in sorted(spreads)) + r")(?!\d)"
    return re.compile(value_part + "|" + spread_part)


def _scanned_texts() -> list[tuple[str, str]]:
    """(where, text) of every chapter cell but the parameters cell, every page and every test.

    The intro's generated table is left out: it is built from the file and a test below
    proves it. Parameters cells hold settings, not results; they must equal the registry's defaults
    (tests/test_pipeline_chapters.py), which is where a setting taken from the paper is said.
    """
    texts = []
    for notebook in sorted((ROOT / "book").glob("*.ipynb")):
        for index, cell in enumerate(json.loads(notebook.read_text(encoding="utf-8"))["cells"]):
            if "parameters" in cell["metadata"].get("tags", []):
                continue
            texts.append((f"{notebook.name} cell {index}", "".join(cell["source"])))
    for page in sorted((ROOT / "book").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        if published.INTRO_BEGIN in text:  # generated from the file (checked below): skip it
            begin, end = text.index(published.INTRO_BEGIN), text.index(published.INTRO_END)
            text = text[:begin] + text[end:]
        texts.append((page.name, text))
    for test in sorted((ROOT / "tests").glob("*.py")):
        if test.name != Path(__file__).name:
            texts.append((test.name, test.read_text(encoding="utf-8")))
    return texts


def test_no_chapter_test_or_page_types_a_paper_number() -> None:
    pattern = _stray_pattern()
    hits = [
        f"{where}: ...{text[max(0, m.start() - 40) : m.end() + 20]!r}..."
        for where, text in _scanned_texts()
        for m in pattern.finditer(text)
    ]
    assert not hits, "paper numbers typed outside data/published.yaml:\n" + "\n".join(hits)


def test_the_scan_would_catch_a_typed_number() -> None:
    assert _stray_pattern().search("the paper reports rho = 0.89 here")
    assert _stray_pattern().search(r"$\\rho = x \\pm 0.02$")
    assert not _stray_pattern().search("k = 10 and 0.891 and 10.89, offset 0.02")


def test_every_entry_loads_with_its_comparison() -> None:
    table = published.load_published()
    rho = table["mw-exp1.rho"]
    assert rho.compare == "band" and rho.low < rho.value < rho.high
    assert all(entry.compare in published.COMPARISONS for entry in table.values())
    assert published.value("mw-exp5.stale_mw_after") == table["mw-exp5.stale_mw_after"].value


def test_an_unknown_key_is_named() -> None:
    with pytest.raises(KeyError, match="no published number 'mw-exp9.rho'"):
        published.value("mw-exp9.rho")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("    compare: band\n", "    compare: roughly\n", "has compare 'roughly'"),
        ("    spread: 0.02\n", "", "is a band and needs a spread"),
        ("    digits: 2\n", "    digits: two\n", "has digits 'two'"),
        ("    obtained: derived\n", "    obtained: guessed\n", "has obtained 'guessed'"),
        ("published: [mw-exp1.rho]", "published: [mw-exp1.nope]", "names unknown entry 'mw-exp1.nope'"),
    ],
)
def test_a_bad_file_is_refused_with_every_problem_named(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    assert old in GOOD
    bad = tmp_path / "published.yaml"
    bad.write_text(GOOD.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(message)):
        published.load_published(bad)


def test_the_intro_table_is_generated_from_the_file() -> None:
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    begin, end = intro.index(published.INTRO_BEGIN), intro.index(published.INTRO_END)
    assert intro[begin : end + len(published.INTRO_END)] == published.intro_table(), (
        "book/intro.md's Memory Worth table differs from data/published.yaml; "
        "regenerate it with python -m forgetting.studies.published"
    )


def test_the_intro_table_says_how_every_setting_was_obtained() -> None:
    for row in published.intro_rows():
        assert row.obtained in published.OBTAINED
        for part in row.book:
            if "::" in part:
                chapter = part.split("::")[0]
                assert chapter in CHAPTERS, part


def test_settings_taken_from_the_paper_equal_its_numbers() -> None:
    from forgetting.studies.text.outcome import OutcomeModel

    assert OutcomeModel().p_all == published.value("mw-exp5.stale_mw_before")
    assert CHAPTERS["mw-exp5"].defaults["p_all"] == published.value("mw-exp5.stale_mw_before")
    assert CHAPTERS["mw-exp5"].defaults["n_episodes"] == published.value("mw-exp5.episodes")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD.replace("    compare: band\n", "    compare: [band\n", 1), "not valid YAML at line"),
        ("sources: {paper: x}\nentries: [1]\nintro_table: []\n", "sources and entries must be mappings"),
        ("- just\n- a list\n", "expected a mapping with sources, entries and intro_table"),
    ],
)
def test_a_broken_file_is_named_with_where_it_breaks(tmp_path: Path, text: str, message: str) -> None:
    bad = tmp_path / "published.yaml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{bad}: {message}")) as caught:
        published.load_published(bad)
    assert "\n" not in str(caught.value)


def test_a_syntax_error_gives_its_line_and_column(tmp_path: Path) -> None:
    lines = GOOD.splitlines(keepends=True)
    line = next(i for i, text in enumerate(lines) if text == "    compare: band\n")
    lines[line] = "    compare: [band\n"
    bad = tmp_path / "published.yaml"
    bad.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{re.escape(str(bad))}: not valid YAML at line \d+, column \d+: "):
        published.load_published(bad)


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "published.yaml"
    bad.write_bytes(GOOD.encode("utf-8").replace("±".encode(), b"\xb1", 1))  # a latin-1 "±"
    with pytest.raises(ValueError, match=re.escape(f"{bad}: not valid UTF-8 (byte ")):
        published.load_published(bad)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "    digits: 2\n",
            "    digits: 1000000000\n",
            "has digits 1000000000; expected an int from 0 to 15",
        ),
        ("    digits: 2\n", "    digits: [2]\n", "has digits [2]"),
        ("    compare: band\n", "    compare: [band]\n", "has compare ['band']"),
        ("    source: paper\n", "    source: [paper]\n", "has source ['paper']"),
        ("    obtained: derived\n", "    obtained: [derived]\n", "has obtained ['derived']"),
        ("published: [mw-exp1.rho]", "published: 3", "has published 3; expected a list of texts"),
        ("    spread: 0.02\n", "    spread: .nan\n", "needs a spread > 0, got nan"),
    ],
)
def test_a_wrong_type_is_a_problem_not_a_crash(tmp_path: Path, old: str, new: str, message: str) -> None:
    assert old in GOOD
    bad = tmp_path / "published.yaml"
    bad.write_text(GOOD.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(message)):
        published.load_published(bad)


def scratch_repository(folder: Path) -> Path:
    (folder / "book").mkdir(parents=True)
    (folder / "_config.yml").write_text("title: scratch\n", encoding="utf-8")
    return folder


def test_a_repository_reads_its_own_file_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout without data/published.yaml fails, naming the file it expected, even though the
    package's own checkout (an editable install) has one; no other copy is ever read."""
    root = scratch_repository(tmp_path / "repo")
    expected = root / "data" / "published.yaml"
    for start in (root, root / "book"):
        with pytest.raises(FileNotFoundError, match=re.escape(f"{expected} is missing")):
            published.published_path(start)
    monkeypatch.chdir(root / "book")  # where a chapter kernel runs
    with pytest.raises(FileNotFoundError, match=re.escape(str(expected))):
        published.value("mw-exp1.rho")
    expected.parent.mkdir()
    assert "value: 0.89" in GOOD
    expected.write_text(GOOD.replace("value: 0.89", "value: 0.5", 1), encoding="utf-8")
    assert published.published_path() == expected
    assert published.load_published()["mw-exp1.rho"].value == 0.5
    assert published.published_path(ROOT / "book") == ROOT / "data" / "published.yaml"
    with pytest.raises(FileNotFoundError, match="no forgetting repository"):
        published.published_path(tmp_path)


def test_glue_texts_keys_each_number_of_a_source_as_the_chapters_glue_it() -> None:
    texts = published.glue_texts("paper")
    table = published.load_published()
    paper = {k: e for k, e in table.items() if e.source == "paper"}
    assert len(texts) == len(paper) > 0
    assert texts["paper_mw_exp1_rho"] == table["mw-exp1.rho"].text()
    assert all(key.startswith("paper_") and "-" not in key and "." not in key for key in texts)
