"""Digests of canonical JSON: key order and dataclasses do not matter, values do."""

import dataclasses
import hashlib

import pytest

from forgetting.hashing import canonical_json, digest


@dataclasses.dataclass
class Point:
    x: int
    y: float


def test_canonical_json_and_digest():
    assert canonical_json({"b": [1, 2.5], "a": None}) == '{"a":null,"b":[1,2.5]}'
    assert digest({"b": 1, "a": 2}) == hashlib.sha256(b'{"a":2,"b":1}').hexdigest()
    assert digest([Point(1, 2.0)]) == digest([{"x": 1, "y": 2.0}])
    assert digest({"a": 1.0}) != digest({"a": 1.0000000000000002})


def test_unserialisable_objects_are_refused():
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        digest({"a": object()})
