"""Hypothesis strategies of the article's session configs, shared by the decay tests."""

from __future__ import annotations

from hypothesis import strategies as st

from forgetting.studies.decay.sessions import SessionConfig, max_recalls


def with_recalls(configs: st.SearchStrategy[SessionConfig], most: int) -> st.SearchStrategy[SessionConfig]:
    """Each config of ``configs`` with 0 .. ``most`` recalls per fact, as many as its session can
    hold (:func:`max_recalls`: :class:`SessionConfig` refuses more)."""
    return configs.flatmap(
        lambda config: st.integers(0, min(most, max_recalls(config))).map(
            lambda recalls: config.replace(recalls_per_foundational=recalls)
        )
    )
