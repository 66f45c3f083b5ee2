"""Chapter parameters: the notebooks, the registry and the command line agree and refuse bad input."""

import ast
import json
from pathlib import Path

import pytest
import yaml

from forgetting.pipeline.chapters import CHAPTERS, Param, spec

ROOT = Path(__file__).resolve().parents[1]


def parameters_cell(name):
    notebook = json.loads((ROOT / "book" / f"{name}.ipynb").read_text())
    cells = [c for c in notebook["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, f"{name}: expected one cell tagged parameters"
    values = {}
    for node in ast.parse("".join(cells[0]["source"])).body:
        assert isinstance(node, ast.Assign), f"{name}: parameters cell holds only assignments"
        values[node.targets[0].id] = ast.literal_eval(node.value)
    return values, notebook


@pytest.mark.parametrize("name", list(CHAPTERS))
def test_notebook_parameters_equal_published_defaults(name):
    values, notebook = parameters_cell(name)
    assert values == spec(name).defaults
    assert all(not c.get("outputs") for c in notebook["cells"] if c["cell_type"] == "code")
    assert spec(name).validate(spec(name).quick) == spec(name).quick  # quick values are valid


def test_every_notebook_is_registered_and_in_the_table_of_contents():
    assert sorted(p.stem for p in (ROOT / "book").glob("*.ipynb")) == sorted(CHAPTERS)
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    entries = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    pages = sorted(p.stem for p in (ROOT / "book").glob("*.md"))
    assert [e for e in entries if e in CHAPTERS] == list(CHAPTERS)  # the book's order is the pipeline's
    assert sorted([toc["root"]] + [e for e in entries if e not in CHAPTERS]) == pages  # every page, once


@pytest.mark.parametrize(
    "param, value",
    [
        (Param("n", 5, "int", 1, 10), 0),
        (Param("n", 5, "int", 1, 10), 2.0),
        (Param("n", 5, "int", 1, 10), True),
        (Param("x", 0.2, "float", 0.0, 1.0), float("nan")),
        (Param("x", 0.2, "float", 0.0, 1.0), "0.2"),
        (Param("b", False, "bool"), 1),
        (Param("l", [1], "int-list", 0), []),
        (Param("l", [1], "int-list", 0), [1, -1]),
    ],
)
def test_bad_parameter_values_are_named(param, value):
    with pytest.raises(ValueError, match=rf"parameter {param.name}=.* expected"):
        param.validate(value)


def test_unknown_chapter_is_refused():
    with pytest.raises(ValueError, match="unknown chapter 'nope'"):
        spec("nope")
