"""Damaged copies of a ``to_dict()`` for the fuzz tests of ``from_dict``: any JSON value put at
any place of the saved data (tests of the engines and of the Memory Worth estimators)."""

from hypothesis import strategies as st

#: Any JSON value, small: what a damaged file could hold where the saved data held something else.
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10) | st.floats() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=6,
)


def places(value, path=()):
    """Every place in ``value`` (dict keys and list indices from the top), the top itself first."""
    yield path
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from places(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from places(inner, (*path, index))


def replaced(value, path, new):
    """A copy of ``value`` with ``new`` at ``path`` (``value`` itself is left as it was)."""
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy


def damaged(data, saved):
    """A hypothesis draw: ``saved`` with one place replaced by any JSON value."""
    path = data.draw(st.sampled_from(list(places(saved))), label="path")
    return replaced(saved, path, data.draw(JSON_VALUES, label="value"))
