"""Chapter checks say where a checked number comes from: a source, a formula or a regression pin."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from forgetting.pipeline.chapter import CHECK_ORIGINS, Chapter
from forgetting.pipeline.chapters import spec
from forgetting.studies.published import load_published

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def chapter(tmp_path: Path) -> Chapter:
    headline = spec("decay-headline")
    made = Chapter(headline, dict(headline.defaults), root=tmp_path)
    made.values.update({"footprint_decay": 0.9114, "mechanism_stability": 291.4, "lost": 13})
    return made


def test_a_source_number_is_read_from_the_published_file(chapter: Chapter) -> None:
    chapter.check_source("footprint_decay", "decay-headline.footprint_reduction_decay")
    chapter.values["footprint_decay"] = 0.9126
    with pytest.raises(
        AssertionError,
        match=r"the source \(article, headline comparison\) publishes 0\.911 "
        r"\(data/published.yaml: decay-headline.footprint_reduction_decay\)",
    ):
        chapter.check_source("footprint_decay", "decay-headline.footprint_reduction_decay")


def test_a_value_can_be_checked_under_its_own_label(chapter: Chapter) -> None:
    chapter.check_source("window FRR at noise 5", "decay-sweeps.noise_frr_window", value=0.0)
    with pytest.raises(AssertionError, match="window FRR at noise 5 = 0.5 rounds to 0.5; the source"):
        chapter.check_source("window FRR at noise 5", "decay-sweeps.noise_frr_window", value=0.5)


def test_only_exact_source_numbers_can_be_asserted(chapter: Chapter) -> None:
    with pytest.raises(
        ValueError, match="entry='mw-exp1.rho' has compare 'band'; check_source needs 'exact'"
    ):
        chapter.check_source("footprint_decay", "mw-exp1.rho")


@pytest.mark.parametrize("origin", sorted(CHECK_ORIGINS))
def test_a_derived_number_or_a_pin_says_which_it_is(chapter: Chapter, origin: str) -> None:
    chapter.check("lost", 13, 0, origin=origin)
    with pytest.raises(AssertionError, match="lost = 13 rounds to 13; " + CHECK_ORIGINS[origin].split()[0]):
        chapter.check("lost", 12, 0, origin=origin)


def test_an_unknown_origin_is_refused_even_off_published_parameters(chapter: Chapter) -> None:
    chapter.params = {**chapter.params, "n_seeds": 3}
    with pytest.raises(ValueError, match=r"origin='source'; allowed: \['derived', 'pin'\]"):
        chapter.check("lost", 13, 0, origin="source")


def test_checks_are_skipped_off_published_parameters_unless_always(chapter: Chapter) -> None:
    chapter.params = {**chapter.params, "n_seeds": 3}
    chapter.check("lost", 99, 0, origin="pin")
    chapter.check_source("footprint_decay", "decay-headline.footprint_reduction_window")
    with pytest.raises(AssertionError, match="the source"):
        chapter.check_source("footprint_decay", "decay-headline.footprint_reduction_window", always=True)


def _calls(name: str) -> list[ast.Call]:
    calls = []
    for notebook in sorted((ROOT / "book").glob("*.ipynb")):
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                tree = ast.parse("".join(line for line in cell["source"] if not line.startswith("%")))
                calls += [
                    node
                    for node in ast.walk(tree)
                    if isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == name
                ]
    return calls


def test_every_source_check_in_the_book_names_a_published_entry() -> None:
    entries = load_published()
    named = [c.args[1] for c in _calls("check_source")]
    assert named, "no chapter checks a source number"
    for node in named:
        if isinstance(node, ast.Constant):
            assert node.value in entries, node.value
            assert entries[node.value].compare == "exact", node.value
        else:  # an f-string: its fixed prefix must start some entry
            assert isinstance(node, ast.JoinedStr), ast.dump(node)
            prefix = node.values[0]
            assert isinstance(prefix, ast.Constant)
            assert any(key.startswith(prefix.value) for key in entries), prefix.value


def test_every_other_check_in_the_book_says_its_origin() -> None:
    calls = _calls("check")
    assert calls, "no chapter checks a derived number or a pin"
    for node in calls:
        origin = [k.value for k in node.keywords if k.arg == "origin"]
        assert origin and isinstance(origin[0], ast.Constant) and origin[0].value in CHECK_ORIGINS, ast.dump(
            node
        )


def test_the_environment_names_python_the_packages_and_the_lock(tmp_path: Path) -> None:
    from importlib import metadata

    from forgetting.pipeline.chapter import ENVIRONMENT_PACKAGES, environment

    assert environment(tmp_path).endswith("; no lock file")
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "lock.txt").write_text("numpy==1\n")
    text = environment(tmp_path)
    assert text.startswith("CPython 3.") or text.startswith("PyPy 3.")
    for name in ENVIRONMENT_PACKAGES:
        assert f"{name} {metadata.version(name)}" in text
    assert "`requirements/lock.txt` sha256 b8a122d596af" in text  # sha256 of "numpy==1\n"


@pytest.mark.parametrize(
    "text", ["5, 10, 20", "0, 0.25, 0.5", "{2, 3, 4}", "none", "True", "[1]", "it's 3", "12"]
)
def test_glued_text_renders_exactly_as_given(text: str) -> None:
    from myst_nb.core.variables import format_plain_text

    from forgetting.pipeline.chapter import _Text

    assert format_plain_text(repr(_Text(text)), "") == text


# --- the one precision of published floats ---------------------------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from forgetting.pipeline.values import PUBLISHED_DIGITS, published_value  # noqa: E402


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_published_float_has_the_stated_significant_digits(value: float) -> None:
    published = published_value(value)
    assert published == float(f"{value:.{PUBLISHED_DIGITS}g}")
    assert float(f"{published:.{PUBLISHED_DIGITS}g}") == published  # D digits say it exactly
    assert published_value(published) == published  # publishing twice changes nothing


@given(st.floats(min_value=1e-300, max_value=1e300), st.integers(-4, 4))
def test_a_few_ulp_of_cpu_noise_rarely_reach_a_published_float(value: float, ulps: int) -> None:
    """Two CPUs that differ by a few ulp publish the same float unless the value lies within
    those ulp of a rounding boundary of the published digits (margin checked explicitly)."""
    import math

    noisy = value
    for _ in range(abs(ulps)):
        noisy = math.nextafter(noisy, math.inf if ulps > 0 else -math.inf)
    boundary = float(f"{value:.{PUBLISHED_DIGITS}e}")  # the nearest published value
    step = 10.0 ** (math.floor(math.log10(abs(value))) - PUBLISHED_DIGITS + 1)
    margin = step / 2 - abs(value - boundary)  # distance to the nearest rounding boundary
    if margin > 8 * math.ulp(value):
        assert published_value(noisy) == published_value(value)


def test_glue_and_tables_publish_at_the_stated_precision(chapter: Chapter, tmp_path: Path) -> None:
    chapter.run_dir = tmp_path
    assert chapter.glue("x", 1.9809006893831547) == chapter.glue("y", 1.9809006893831544) == 1.980900689
    chapter.table([{"a": 0.12345678901234, "b": 3, "c": "t"}], "t")
    assert (tmp_path / "results" / f"{chapter.name}-t.csv").read_text() == "a,b,c\n0.123456789,3,t\n"
    assert chapter.glue("big", 10**20) == 10**20 and chapter.glue("nan", float("nan")) != 0


def test_a_key_glued_twice_is_refused_and_keeps_its_first_value(chapter: Chapter) -> None:
    """myst-nb keeps one value per key and page, and the site build fails on a second glue (as
    real-conversations' page did without its data): the run refuses it where it happens."""
    chapter.glue("once", 1.5)
    with pytest.raises(ValueError, match=r"key='once' is glued twice \(first 1.5, now 2.5\)"):
        chapter.glue("once", 2.5)
    assert chapter.values["once"] == 1.5


def test_the_reproducibility_page_states_the_published_precision() -> None:
    words = {10: "ten", 12: "twelve", 8: "eight"}
    page = (ROOT / "book" / "reproducibility.md").read_text(encoding="utf-8")
    assert f"written at {words[PUBLISHED_DIGITS]} significant digits" in page
