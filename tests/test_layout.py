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


def test_every_pytest_raises_says_what_it_expects():
    """CONTRIBUTING.md: a ``pytest.raises`` gives ``match=`` or names the exception it catches
    (``as error``) and reads it afterwards in the same test."""
    import ast

    unchecked = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
            for block in (n for n in ast.walk(function) if isinstance(n, ast.With)):
                for item in block.items:
                    call = item.context_expr
                    if not (isinstance(call, ast.Call) and ast.unparse(call.func) == "pytest.raises"):
                        continue
                    if any(k.arg == "match" for k in call.keywords):
                        continue
                    name = item.optional_vars.id if isinstance(item.optional_vars, ast.Name) else None
                    read = name is not None and any(
                        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                        for n in ast.walk(function)
                    )
                    if not read:
                        unchecked.append(f"{path.name}:{block.lineno}")
    assert unchecked == []
