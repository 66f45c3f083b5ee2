"""Library defaults are the chapters' defaults: every Memory Worth chapter parameter that has a
library default equals its registered (published) default."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from forgetting.pipeline.chapters import CHAPTERS
from forgetting.studies import worlds as W
from forgetting.studies.text import exp5
from forgetting.studies.text.outcome import OutcomeModel


def _default(function: Callable[..., Any], argument: str) -> Any:
    value = inspect.signature(function).parameters[argument].default
    assert value is not inspect.Parameter.empty, f"{function.__name__}({argument}) has no default"
    return value


# chapter -> parameter -> (library callable, its argument)
SOURCES: dict[str, dict[str, tuple[Callable[..., Any], str]]] = {
    "mw-theory": {
        "n_memories": (W.TheoryWorld, "n_memories"),
        "retrieved_per_episode": (W.TheoryWorld, "retrieved_per_episode"),
        "checkpoints": (W.TheoryWorld, "checkpoints"),
        "n_seeds": (W.theory_check, "n_seeds"),
        "seed": (W.theory_check, "seed"),
        "discount": (W.discounted_theory_check, "discount"),
        "adaptive_memories": (W.AdaptiveWorld, "n_memories"),
        "adaptive_temperature": (W.AdaptiveWorld, "temperature"),
    },
    "mw-exp1": {
        "n_memories": (W.ControlledWorld, "n_memories"),
        "retrieved_per_episode": (W.ControlledWorld, "retrieved_per_episode"),
        "n_episodes": (W.ControlledWorld, "n_episodes"),
        "checkpoints": (W.ControlledWorld, "checkpoints"),
        "n_seeds": (W.controlled_experiment, "n_seeds"),
        "seed": (W.controlled_experiment, "seed"),
        "depths": (W.retrieval_depth_sweep, "depths"),
    },
    "mw-exp2": {
        **{
            name: (W.ConfoundWorld, name)
            for name in (
                "n_generalists",
                "n_specialists",
                "retrieved_per_episode",
                "n_episodes",
                "hard_fraction",
                "easy_base_rate",
                "hard_base_rate",
                "memory_effect",
                "generalist_utility",
                "specialist_utility",
            )
        },
        "n_seeds": (W.confound_experiment, "n_seeds"),
        "seed": (W.confound_experiment, "seed"),
        "episode_counts": (W.confound_episode_sweep, "episode_counts"),
        "memory_effects": (W.confound_sweep, "memory_effects"),
        "specialist_counts": (W.confound_sweep, "specialist_counts"),
    },
    "mw-exp3": {
        "n_memories": (W.PolicyWorld, "n_memories"),
        "retrieved_per_episode": (W.PolicyWorld, "retrieved_per_episode"),
        "n_episodes": (W.PolicyWorld, "n_episodes"),
        "temperature": (W.PolicyWorld, "temperature"),
        "n_seeds": (W.policy_experiment, "n_seeds"),
        "seed": (W.policy_experiment, "seed"),
        "temperatures": (W.temperature_sweep, "temperatures"),
    },
    "mw-exp4": {
        **{
            name: (W.CoRetrievalWorld, name)
            for name in (
                "n_memories",
                "retrieved_per_episode",
                "n_episodes",
                "anchor_utility",
                "hitchhiker_utility",
                "diversities",
            )
        },
        "n_seeds": (W.co_retrieval_experiment, "n_seeds"),
        "seed": (W.co_retrieval_experiment, "seed"),
        "anchor_success": (W.AnchorDecidesWorld, "anchor_success"),
        "other_success": (W.AnchorDecidesWorld, "other_success"),
        "diversity_steps": (W.AnchorDecidesWorld, "diversity_steps"),
    },
    "mw-exp5": {
        "n_episodes": (exp5.RealTextWorld, "n_episodes"),
        "shift_episode": (exp5.RealTextWorld, "shift_episode"),
        "k": (exp5.RealTextWorld, "k"),
        "seed": (exp5.RealTextWorld, "seed"),
        "p_all": (OutcomeModel, "p_all"),
        "p_none": (OutcomeModel, "p_none"),
        "p_stale": (OutcomeModel, "p_stale"),
        "stale_misleads_any_task": (OutcomeModel, "stale_misleads_any_task"),
    },
}


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


@pytest.mark.parametrize(
    ("chapter", "name"), [(chapter, name) for chapter, params in SOURCES.items() for name in params]
)
def test_library_default_equals_the_registered_default(chapter: str, name: str) -> None:
    function, argument = SOURCES[chapter][name]
    registered = CHAPTERS[chapter].defaults[name]
    assert _plain(_default(function, argument)) == _plain(registered), (
        f"{chapter}: {name} is {registered!r} in the registry but "
        f"{_default(function, argument)!r} in {function.__name__}"
    )


def test_every_memory_worth_chapter_is_covered() -> None:
    assert {name for name in CHAPTERS if name.startswith("mw-")} == set(SOURCES)
