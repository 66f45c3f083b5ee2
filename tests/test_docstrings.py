"""Every docstring example in the library runs and gives what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import forgetting

MODULES = ["forgetting"] + [
    module.name for module in pkgutil.walk_packages(forgetting.__path__, "forgetting.")
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    failures, _ = doctest.testmod(importlib.import_module(name))
    assert failures == 0


def test_there_are_examples_to_run():
    tried = sum(doctest.testmod(importlib.import_module(name)).attempted for name in MODULES)
    assert tried >= 15
