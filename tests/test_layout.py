"""The layout the README and CONTRIBUTING.md describe is the tree, and imports run one way."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "forgetting"


def packages_and_modules():
    """The package folders and top-level modules of both layers: the library and its studies."""
    names = set()
    for layer in (SRC, SRC / "studies"):
        names |= {p.name for p in layer.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
        names |= {p.name for p in layer.glob("*.py") if p.name != "__init__.py"}
    return names


def test_every_subpackage_is_an_attribute_of_the_package_on_first_use():
    """``import forgetting`` imports no subpackage and no numpy; ``forgetting.<name>`` then
    imports the subpackage of that name, for every package folder of the tree."""
    import json
    import subprocess
    import sys

    names = sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").exists())
    code = (
        "import json, sys, forgetting\n"
        "before = sorted(m for m in sys.modules if m == 'numpy' or m.startswith('forgetting.'))\n"
        f"reached = [getattr(forgetting, name).__name__ for name in {names!r}]\n"
        "print(json.dumps([before, reached, dir(forgetting), hasattr(forgetting, 'nowhere')]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, reached, listed, nowhere = json.loads(done.stdout)
    assert before == []
    assert reached == [f"forgetting.{name}" for name in names]
    assert set(names) <= set(listed)
    assert nowhere is False


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


def library_imports(root: Path = SRC) -> dict[str, set[str]]:
    """Each module of the library (``conversations.study``; a package is its ``__init__``:
    ``conversations``) and the library modules it imports: at module level, under
    ``TYPE_CHECKING`` and inside functions alike, relative or absolute. ``from package import
    name`` is an import of ``package.name`` when that is a module, else of the package."""
    import ast

    paths = {p: p.relative_to(root).with_suffix("").parts for p in root.rglob("*.py")}
    names = {p: ".".join(parts[:-1] if parts[-1] == "__init__" else parts) for p, parts in paths.items()}
    modules = set(names.values())
    graph = {}
    for path, name in names.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found = [a.name.split(".")[1:] for a in node.names if a.name.split(".")[0] == "forgetting"]
                targets |= {".".join(parts) for parts in found}
            elif isinstance(node, ast.ImportFrom):
                module = node.module.split(".") if node.module else []
                if node.level:
                    base = package[: len(package) - node.level + 1] + module
                elif module[:1] == ["forgetting"]:
                    base = module[1:]
                else:
                    continue
                for alias in node.names:
                    inner = ".".join([*base, alias.name])
                    targets.add(inner if inner in modules else ".".join(base))
        graph[name] = (targets & modules) - {name}
    return graph


def test_library_imports_finds_a_lazy_import_and_one_for_type_checking(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .a import A\n")
    (package / "a.py").write_text("def f():\n    from .b import B\n")
    (package / "b.py").write_text("if TYPE_CHECKING:\n    from . import a\n")
    (package / "c.py").write_text("import forgetting.x\nfrom .. import elsewhere\n")
    graph = library_imports(tmp_path)
    assert graph == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}, "pkg.c": set()}
    assert cycles(graph)[0] == ["pkg.a", "pkg.b", "pkg.a"]


def test_no_module_of_the_library_imports_one_that_imports_it_back():
    """Imports run one way everywhere in ``src/forgetting``: no module reaches itself through
    the library's imports, counting module-level ones, those under ``TYPE_CHECKING`` and lazy
    ones inside functions (a lazy import that goes back up is the same circle, postponed)."""
    found = cycles(library_imports())
    assert found == [], "import circles: " + "; ".join(" -> ".join(c) for c in found)


LAYERS = ("library", "studies", "pipeline")


def layer(module: str) -> str:
    """The layer of a module named as :func:`library_imports` names it (``studies.decay.study``)."""
    top = module.split(".")[0]
    return top if top in ("studies", "pipeline") else "library"


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that runs up the layers: library -> studies -> pipeline, never back."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    return sorted(
        f"{m} -> {t}" for m, targets in graph.items() for t in targets if rank[layer(t)] > rank[layer(m)]
    )


def test_layer_violations_finds_a_library_module_that_imports_a_study(tmp_path):
    (tmp_path / "studies").mkdir()
    (tmp_path / "studies" / "__init__.py").write_text("")
    (tmp_path / "studies" / "a.py").write_text("from ..engine import E\n")
    (tmp_path / "engine.py").write_text("def f():\n    from .studies import a\n")
    (tmp_path / "pipeline.py").write_text("from .studies import a\n")
    assert layer_violations(library_imports(tmp_path)) == ["engine -> studies.a"]


def test_the_library_never_imports_the_studies_or_the_pipeline():
    """Two layers, visible in the tree: the library (everything but ``studies/`` and
    ``pipeline/``) imports neither, even lazily or for type checking, and no study imports the
    pipeline. What an agent builder installs runs without the book's experiments."""
    graph = library_imports()
    assert {layer(m) for m in graph} == set(LAYERS)
    assert layer_violations(graph) == []


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
