"""Sphinx extension of the book's API reference (``book/api.md``): each public object of the
library documented once, and every name it is reachable under leading to that entry.

The library re-exports: ``forgetting.MemoryWorth`` is ``forgetting.worth.MemoryWorth`` is
``forgetting.worth.estimator.MemoryWorth``, and its docstrings name an object by whichever of
its names reads best where they are (the module that defines it, often). The API page documents
each name of ``forgetting.__all__`` at the top level and every other public name under its
subpackage (the subpackage's ``__all__``), and autodoc alone would not match the two:

* a subpackage's ``automodule`` would document the core names a second time: they are left out
  there (:func:`skip_member`);
* autodoc reads a constant's docstring (its ``#:`` comment or the string after it) only from
  the module it documents, so a constant a package re-exports from a submodule would have none
  and be left out: it keeps the docstring of the module that defines it
  (:class:`ReexportedDataDocumenter`, :func:`skip_member`);
* a reference by another of the object's names (``forgetting.worth.formulas.memory_worth``, a
  class's name inside its package, ``.policies.replay`` relative to the current module) finds
  no entry: :func:`resolve` links it to the entry of the same object, and a reference to a
  library module that has no entry of its own (``forgetting.worth.formulas``) to the section of
  the package that holds it;
* numpydoc sections are read by napoleon (:func:`numpydoc`), which would take the text before
  the first colon of an attribute's or a constant's docstring for its type, and prose after a
  ``Parameters`` list for one more parameter.

A reference to an object of the library that exists but is documented nowhere (a submodule's
helper, such as ``forgetting.worth.batch.validate_batch``) is shown as its name, unlinked. A
reference to a name that is no object of the library still fails the nitpicky build.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import re
import sys
from typing import Any

from sphinx import addnodes
from sphinx.ext import napoleon
from sphinx.ext.autodoc import DataDocumenter, ModuleDocumenter
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.nodes import make_refnode

LIBRARY = "forgetting"
#: The book's own layers below the library: never documented, never resolved here (their
#: references are the ``nitpick_ignore_regex`` of ``_config.yml``).
NOT_LIBRARY = ("forgetting.studies", "forgetting.pipeline")
_MISSING = object()


def in_library(name: str) -> bool:
    """``name`` is ``forgetting`` or below it, and not in the studies or the pipeline."""
    return (name == LIBRARY or name.startswith(LIBRARY + ".")) and not any(
        name == top or name.startswith(top + ".") for top in NOT_LIBRARY
    )


def locate(name: str) -> Any:
    """The object a dotted name of the library stands for (``_MISSING`` if none): the longest
    importable module prefix, then attributes."""
    if not in_library(name):
        return _MISSING
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


def of_library(name: str, obj: Any) -> bool:
    """``obj``, found at ``name``, is the library's own: a library module under its own name, a
    class or function defined in the library, or a constant (not a module) bound there."""
    if obj is _MISSING:
        return False
    if inspect.ismodule(obj):
        return obj.__name__ == name
    defined_in = getattr(getattr(obj, "fget", obj), "__module__", None)
    if isinstance(defined_in, str):
        return in_library(defined_in)
    return is_constant(obj)


def is_field(cls: Any, name: str) -> bool:
    """``name`` is an annotated field of class ``cls`` with no class attribute (a dataclass's
    field without a default), described in the class's docstring."""
    return inspect.isclass(cls) and any(name in vars(c).get("__annotations__", {}) for c in cls.__mro__)


def identity(name: str, obj: Any) -> tuple[str, Any, Any]:
    """What two names of the same object share: its last name, the object (a bound method: its
    function and instance, a new method object each time it is read) and, for a class's member,
    the class (``MemoryWorth.update`` is also ``DiscountedMemoryWorth.update``, another entry)."""
    parent = locate(name.rpartition(".")[0])
    owner = id(parent) if inspect.isclass(parent) else None
    if inspect.ismethod(obj):
        return name.rpartition(".")[2], (id(obj.__func__), id(obj.__self__)), owner
    return name.rpartition(".")[2], id(obj), owner


def defining_source(package: str, name: str, value: Any) -> tuple[list[str], str] | None:
    """The docstring of constant ``name`` in the submodule of ``package`` that defines it (the one
    among those binding ``name`` to ``value`` whose source documents it) and that submodule's
    file, or ``None``."""
    for modname in sorted(m for m in sys.modules if m.startswith(package + ".")):
        if vars(sys.modules[modname]).get(name, _MISSING) is not value:
            continue
        try:
            analyzer = ModuleAnalyzer.for_module(modname)
            analyzer.analyze()
        except Exception:  # no source: nothing to read
            continue
        comment = analyzer.attr_docs.get(("", name))
        if comment:
            return list(comment), str(analyzer.srcname)
    return None


def is_constant(obj: Any) -> bool:
    return not (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj))


class ReexportedDataDocumenter(DataDocumenter):
    """``autodata``, with the docstring of a constant a package re-exports read from the
    submodule that defines it (:func:`defining_source`; the page is rebuilt when that changes)."""

    @classmethod
    def can_document_member(cls, member: Any, membername: str, isattr: bool, parent: Any) -> bool:
        if super().can_document_member(member, membername, isattr, parent):
            return True
        return (
            isinstance(parent, ModuleDocumenter)
            and in_library(parent.modname)
            and is_constant(member)
            and membername in getattr(parent.object, "__all__", ())
            and defining_source(parent.modname, membername, member) is not None
        )

    def get_module_comment(self, attrname: str) -> list[str] | None:
        comment = super().get_module_comment(attrname)
        if comment or not in_library(self.modname):
            return comment
        found = defining_source(self.modname, attrname, self.object)
        if found is None:
            return None
        self.directive.record_dependencies.add(found[1])
        return found[0]


def skip_member(app: Any, what: str, name: str, obj: Any, skip: bool, options: Any) -> bool | None:
    """A module's member: left out of a subpackage if it is a core name (documented at the top
    level, as ``forgetting.<name>``); kept if it is a constant of the module's ``__all__`` whose
    docstring is in the submodule that defines it. A class's member: left out if it comes from a
    class outside the library (``str``'s methods on an enum, ``tuple``'s on a named tuple, an
    exception's ``args``), kept if inherited from a library class (the engines' ``register``,
    ``recall`` and ``step`` are their base class's). Anything else: autodoc's decision."""
    module = app.env.temp_data.get("autodoc:module")
    if not module or not in_library(module):
        return None
    if what in ("class", "exception"):
        owner = locate(f"{module}.{app.env.temp_data.get('autodoc:class')}")
        definer = next((c for c in getattr(owner, "__mro__", ()) if name in vars(c)), None)
        if definer is not None and definer is not owner and not in_library(definer.__module__):
            return True
        return None
    if what != "module" or module == LIBRARY:
        return None
    top = importlib.import_module(LIBRARY)
    if name in top.__all__ and getattr(top, name) is obj:
        return True
    package = sys.modules.get(module)
    if (
        skip
        and name in getattr(package, "__all__", ())
        and is_constant(obj)
        and defining_source(module, name, obj)
    ):
        return False
    return None


#: The numpydoc sections that list names (``name : type`` then an indented description).
FIELD_SECTIONS = frozenset({"parameters", "other parameters", "attributes", "keyword arguments"})
FIELD = re.compile(r"\*{0,2}\w+(\s*,\s*\*{0,2}\w+)*(\s+:(\s.*)?)?")
UNDERLINE = re.compile(r"\s*-{3,}\s*")


def end_field_lists(lines: list[str]) -> None:
    """End a list of names where the docstring goes on in prose, in place.

    The library's docstrings may follow a ``Parameters`` list with a paragraph or an example
    at the same indentation (``Raises ValueError for ...``, ``>>> ...``); napoleon would read it
    as one more parameter. Two empty lines end a numpydoc section for napoleon: they are put
    before the first line of such a section that is neither a name line nor indented."""
    out: list[str] = []
    section = None
    for i, line in enumerate(lines):
        if line.strip() and i + 1 < len(lines) and UNDERLINE.fullmatch(lines[i + 1]):
            section = line.strip().lower()
        elif (
            section in FIELD_SECTIONS
            and line[:1].strip()
            and not UNDERLINE.fullmatch(line)
            and not FIELD.fullmatch(line.rstrip())
        ):
            while out and not out[-1].strip():
                out.pop()
            out += ["", ""]
            section = None
        out.append(line)
    lines[:] = out


def numpydoc(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """Napoleon's reading of numpydoc sections, for everything but attributes, constants and
    properties: napoleon would read the first line of their docstring up to a colon as a type
    (``HELD``: "In the working set and not deprecated: retrievable.")."""
    if what in ("attribute", "data", "property"):
        return
    end_field_lists(lines)
    napoleon._process_docstring(app, what, name, obj, options, lines)


def enum_signature(
    app: Any, what: str, name: str, obj: Any, options: Any, signature: Any, annotation: Any
) -> Any:
    """An enumeration's entry shows no signature: its members are its values, and the one
    ``EnumType.__call__`` has (``value, names=None, *, module=None, ...``) is not how it is used."""
    if what == "class" and inspect.isclass(obj) and issubclass(obj, enum.Enum):
        return "", annotation
    return None


def documented(app: Any, env: Any) -> dict[tuple[Any, ...], Any]:
    """Each documented library object's :func:`identity` -> its entry in the Python domain, and
    the same without the class (a member of a class documented nowhere, ``ScheduledEngine``,
    is also a member of the classes documented that inherit it: the first of those, by name).
    Computed once a build, after every page is read."""
    index = getattr(app, "_forgetting_api_index", None)
    if index is None:
        index = {}
        for fullname, entry in sorted(env.get_domain("py").objects.items()):
            obj = locate(fullname)
            if obj is not _MISSING and not entry.aliased:
                key = identity(fullname, obj)
                index.setdefault(key, entry)
                index.setdefault(key[:2], entry)
        app._forgetting_api_index = index
    return index


def forget_index(app: Any, env: Any) -> None:
    """A new build reads pages again: the next resolution computes :func:`documented` afresh."""
    app._forgetting_api_index = None


def home(node: Any) -> str | None:
    """The module that defines the object whose docstring holds ``node`` (``None``: no object's),
    where the docstring's names were written: a class documented as ``forgetting.MemoryWorth``
    names what ``forgetting.worth.estimator`` imports."""
    parent = node.parent
    while parent is not None:
        if isinstance(parent, addnodes.desc):
            for signature in parent.findall(addnodes.desc_signature):
                obj = locate(f"{signature.get('module')}.{signature.get('fullname')}")
                obj = getattr(obj, "fget", obj)  # a property: its getter's module
                module = getattr(obj, "__module__", None)
                if isinstance(module, str) and in_library(module):
                    return module
                break
        parent = parent.parent
    return None


def candidates(node: Any) -> list[str]:
    """The names a Python reference can mean: itself, within the current class and module and
    the module its docstring comes from (:func:`home`), and (a reference written with a leading
    dot) within each package above those modules."""
    target, module, cls = node["reftarget"], node.get("py:module"), node.get("py:class")
    names = [target]
    for base in dict.fromkeys(m for m in (module, home(node)) if m):
        names += [f"{base}.{cls}.{target}"] if cls and base == module else []
        names.append(f"{base}.{target}")
        if node.get("refspecific"):
            parts = base.split(".")
            names += [".".join([*parts[:cut], target]) for cut in range(len(parts) - 1, 0, -1)]
    return names


def resolve(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """A Python reference to a library object under another of its names: a link to its entry;
    to a library module without one: a link to the section of the nearest documented package;
    to a library object that exists but is not public (documented nowhere, such as a
    submodule's helper ``forgetting.worth.batch.validate_batch``): its name, as code, unlinked."""
    if node.get("refdomain") != "py":
        return None
    index = documented(app, env)
    modules = env.get_domain("py").modules
    found = []
    for name in candidates(node):
        obj = locate(name)
        if obj is _MISSING:
            owner, _, field = name.rpartition(".")
            if is_field(locate(owner), field):
                name, obj = owner, locate(owner)  # a dataclass's field: its class's entry
        if not of_library(name, obj):
            continue
        found.append(name)
        key = identity(name, obj)
        entry = index.get(key, index.get(key[:2]) if key[2] is not None else None)
        if entry is None and inspect.ismodule(obj):
            package = name
            while "." in package and package not in modules:
                package = package.rpartition(".")[0]
            entry = modules.get(package) if package != LIBRARY else None
        if entry is not None:
            return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, name)
    return contnode if found else None


def setup(app: Any) -> dict[str, Any]:
    """Register the documenter and the event handlers (after ``sphinx.ext.autodoc``)."""
    app.setup_extension("sphinx.ext.autodoc")
    app.setup_extension("sphinx.ext.napoleon")
    for listener in list(app.events.listeners["autodoc-process-docstring"]):
        if listener.handler is napoleon._process_docstring:  # replaced by numpydoc()
            app.disconnect(listener.id)
    app.connect("autodoc-process-docstring", numpydoc)
    app.add_autodocumenter(ReexportedDataDocumenter, override=True)
    app.connect("autodoc-skip-member", skip_member)
    app.connect("autodoc-process-signature", enum_signature)
    app.connect("env-before-read-docs", lambda app, env, docnames: forget_index(app, env))
    app.connect("missing-reference", resolve)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
