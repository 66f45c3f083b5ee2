"""The layout the README and CONTRIBUTING.md describe is the tree, and no module outgrows a sitting."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "forgetting"
MAX_LINES = 425  # "no module over ~400 lines", with a little slack for a long module docstring


def packages_and_modules():
    names = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    return names | {p.name for p in SRC.glob("*.py") if p.name != "__init__.py"}


def test_readme_layout_names_every_package_and_module():
    layout = (ROOT / "README.md").read_text().split("## Layout", 1)[1].split("```")[1]
    named = set(re.findall(r"(\w+)/", layout)) | set(re.findall(r"(\w+\.py)", layout))
    assert packages_and_modules() <= named
    assert {n for n in named if n.endswith(".py")} - {"make.py"} <= packages_and_modules()


def test_contributing_architecture_names_every_package_and_module():
    text = (ROOT / "CONTRIBUTING.md").read_text().split("## Architecture", 1)[1].split("```")[1]
    named = set(re.findall(r"(\w+)/", text)) | set(re.findall(r"(\w+\.py)", text))
    assert packages_and_modules() <= named
    for package in (p for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()):
        for module in package.glob("*.py"):
            if module.name != "__init__.py" and package.name in ("decay", "worth"):
                assert module.name in text, f"CONTRIBUTING.md does not name {package.name}/{module.name}"


def test_no_module_is_much_over_four_hundred_lines():
    sizes = {str(p.relative_to(SRC)): len(p.read_text().splitlines()) for p in SRC.rglob("*.py")}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_no_science_module_imports_the_pipeline():
    for path in SRC.rglob("*.py"):
        if "pipeline" in path.relative_to(SRC).parts:
            continue
        text = path.read_text()
        assert "pipeline" not in re.findall(r"^\s*(?:from|import) [\w.]*", text, re.M).__str__(), path
