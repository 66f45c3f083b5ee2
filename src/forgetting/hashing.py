"""Content digests: the SHA-256 of an object's canonical JSON.

A digest names *what* was computed, not *when* or *where*: two runs that give the same
values give the same digest. Used by the pipeline for result files and by experiments
that fingerprint their outcomes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

__all__ = ["canonical_json", "digest"]


def canonical_json(obj: Any) -> str:
    """``obj`` as JSON with sorted keys and no whitespace; dataclasses as their field dicts."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_jsonable)


def digest(obj: Any) -> str:
    """Hex SHA-256 of :func:`canonical_json` of ``obj`` (UTF-8).

    >>> digest({"b": 1, "a": [1.5, None]}) == digest({"a": [1.5, None], "b": 1})
    True
    """
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()


def _jsonable(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    raise TypeError(f"not JSON-serialisable: {obj!r}")
