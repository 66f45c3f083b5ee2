"""Every docstring example in the science packages runs and gives what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import forgetting.decay
import forgetting.worlds
import forgetting.worth

MODULES = ["forgetting._validate", "forgetting.stats", "forgetting.hashing"] + [
    module.name
    for package in (forgetting.decay, forgetting.worth, forgetting.worlds)
    for module in pkgutil.iter_modules(package.__path__, package.__name__ + ".")
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    failures, _ = doctest.testmod(importlib.import_module(name))
    assert failures == 0


def test_there_are_examples_to_run():
    tried = sum(doctest.testmod(importlib.import_module(name)).attempted for name in MODULES)
    assert tried >= 15
