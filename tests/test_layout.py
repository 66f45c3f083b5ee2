"""The layout the README and CONTRIBUTING.md describe is the tree, and imports run one way."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "forgetting"


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
            if module.name != "__init__.py" and package.name in ("decay", "curves", "worth"):
                assert module.name in text, f"CONTRIBUTING.md does not name {package.name}/{module.name}"


def test_no_science_module_imports_the_pipeline():
    for path in SRC.rglob("*.py"):
        if "pipeline" in path.relative_to(SRC).parts:
            continue
        text = path.read_text()
        assert "pipeline" not in re.findall(r"^\s*(?:from|import) [\w.]*", text, re.M).__str__(), path


def test_decay_never_imports_the_curve_shape_package():
    """``curves/`` builds on ``decay/``; the dependency runs one way."""
    for path in (SRC / "decay").rglob("*.py"):
        imports = re.findall(r"^\s*(?:from|import) ([\w.]+)", path.read_text(), re.M)
        assert not [
            i
            for i in imports
            if i in ("..curves", "forgetting.curves") or i.startswith(("..curves.", "forgetting.curves."))
        ], path


def sibling_imports(package: Path) -> dict[str, set[str]]:
    """Each module of ``package`` and the sibling modules it imports, anywhere in it (inside
    functions and under ``TYPE_CHECKING`` too)."""
    import ast

    modules = {p.stem for p in package.glob("*.py")} - {"__init__"}
    graph = {}
    for name in modules:
        found = set()
        for node in ast.walk(ast.parse((package / f"{name}.py").read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                found |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
        graph[name] = found & modules
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every module that can reach itself, with the path it takes (depth-first)."""
    found = []
    for start in sorted(graph):
        stack = [(start, [start])]
        seen = set()
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph[node]):
                if nxt == start:
                    found.append([*path, start])
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    return found


def test_cycles_finds_a_cycle_through_three_modules():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})[0] == ["a", "b", "c", "a"]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_pipeline_reads_top_to_bottom():
    """No module of ``pipeline/`` imports, even for type checking, one that imports it back."""
    assert cycles(sibling_imports(SRC / "pipeline")) == []


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
