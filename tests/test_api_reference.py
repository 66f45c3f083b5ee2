"""The API reference (``book/api.md``) covers the library, and its Sphinx extension reads the
library's docstrings as they are written (no build here: ``tests/test_site.py`` checks the built
page names every public name)."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest
from sphinx.pycode import ModuleAnalyzer

from api_names import every_public_name, library_modules
from conftest import ROOT
from forgetting.pipeline import sphinx_api

AUTOMODULE = re.compile(r"^\.\. automodule:: (\S+)$", re.M)


def test_the_api_page_has_a_section_for_every_library_module():
    """A new subpackage or public module of the library needs its section (studies and the
    pipeline have none: they are the book's, built on the library)."""
    documented = AUTOMODULE.findall((ROOT / "book" / "api.md").read_text(encoding="utf-8"))
    assert set(library_modules()) <= set(documented)
    assert [name for name in documented if not sphinx_api.in_library(name)] == []
    assert len(documented) == len(set(documented))


@pytest.mark.parametrize(("modname", "name"), every_public_name(), ids="{0[0]}.{0[1]}".format)
def test_every_public_name_has_a_docstring(modname, name):
    """What the API page shows for it: a class's or function's docstring, or a constant's
    ``#:`` comment or string after it (in the module that defines it, for a re-export)."""
    obj = getattr(importlib.import_module(modname), name)
    if not sphinx_api.is_constant(obj):
        assert inspect.getdoc(obj)
        return
    own = ModuleAnalyzer.for_module(modname).find_attr_docs().get(("", name))
    assert own or sphinx_api.defining_source(modname, name, obj)


def test_prose_after_a_parameter_list_ends_it():
    lines = [
        "Summary.",
        "",
        "Parameters",
        "----------",
        "x, y : float",
        "    The point.",
        "*args",
        "",
        "Raises ``ValueError`` for a NaN: nothing else.",
        ">>> f(1)",
        "",
        "Returns",
        "-------",
        "int array of shape (n,)",
    ]
    expected = [*lines[:7], "", "", *lines[8:]]
    sphinx_api.end_field_lists(lines)
    assert lines == expected


def test_locate_finds_library_objects_under_every_name():
    from forgetting.worth import estimator

    assert sphinx_api.locate("forgetting.MemoryWorth") is estimator.MemoryWorth
    assert sphinx_api.locate("forgetting.worth.estimator.MemoryWorth.update") is estimator.MemoryWorth.update
    missing = sphinx_api.locate("forgetting.worth.no_such_name")
    assert not sphinx_api.of_library("forgetting.worth.no_such_name", missing)
    # the book's layers are never looked up, nor a third-party module imported by the library
    assert not sphinx_api.of_library("forgetting.studies", sphinx_api.locate("forgetting.studies"))
    assert not sphinx_api.of_library(
        "forgetting.worth.formulas.np", sphinx_api.locate("forgetting.worth.formulas.np")
    )
    assert sphinx_api.of_library("forgetting.worth.formulas", sphinx_api.locate("forgetting.worth.formulas"))


def test_a_class_member_has_the_identity_of_its_class():
    """``MemoryWorth.update`` is reached as ``forgetting.MemoryWorth.update`` and as
    ``forgetting.worth.estimator.MemoryWorth.update``, and is another entry than the same function
    inherited by ``DiscountedMemoryWorth``."""
    top = sphinx_api.identity(
        "forgetting.MemoryWorth.update", sphinx_api.locate("forgetting.MemoryWorth.update")
    )
    deep = "forgetting.worth.estimator.MemoryWorth.update"
    inherited = "forgetting.DiscountedMemoryWorth.update"
    assert sphinx_api.identity(deep, sphinx_api.locate(deep)) == top
    assert sphinx_api.identity(inherited, sphinx_api.locate(inherited)) != top
    assert sphinx_api.identity(inherited, sphinx_api.locate(inherited))[:2] == top[:2]
