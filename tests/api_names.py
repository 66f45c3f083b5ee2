"""The library's public names, where the API reference (``book/api.md``) documents each."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil

import forgetting

#: The book's layers built on the library: not part of its API reference.
NOT_LIBRARY = ("studies", "pipeline")


def library_modules() -> list[str]:
    """Every module of the library whose public names the API reference documents: ``forgetting``,
    each subpackage with an ``__all__``, each public top-level module, and the public modules of
    a subpackage without one (``forgetting.curves``). Private modules (``_validate``) are not."""
    modules = ["forgetting"]
    for info in pkgutil.iter_modules(forgetting.__path__):
        if info.name.startswith("_") or info.name in NOT_LIBRARY:
            continue
        name = f"forgetting.{info.name}"
        module = importlib.import_module(name)
        if info.ispkg and not hasattr(module, "__all__"):
            modules += [
                f"{name}.{sub.name}"
                for sub in pkgutil.iter_modules(module.__path__)
                if not sub.name.startswith("_")
            ]
        else:
            modules.append(name)
    return modules


def public_names(modname: str) -> list[str]:
    """A module's ``__all__``; without one, the names its source defines at the top level that
    do not start with an underscore."""
    module = importlib.import_module(modname)
    if hasattr(module, "__all__"):
        return list(module.__all__)
    names = []
    for node in ast.parse(inspect.getsource(module)).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    return [name for name in names if not name.startswith("_")]


def documented_name(modname: str, name: str) -> str:
    """The name the API reference documents ``modname.name`` under: ``forgetting.<name>`` for a
    core name (one of ``forgetting.__all__``, documented once, at the top level), else itself."""
    if name in forgetting.__all__ and getattr(forgetting, name) is getattr(
        importlib.import_module(modname), name
    ):
        return f"forgetting.{name}"
    return f"{modname}.{name}"


def every_public_name() -> list[tuple[str, str]]:
    """``(module, name)`` for every public name of every library module, core names included."""
    return [(modname, name) for modname in library_modules() for name in public_names(modname)]
