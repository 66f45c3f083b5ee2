"""forgetting.studies.text.corpus: the shipped corpus has every role, and the accessors agree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from forgetting.studies.text.corpus import AFTER, BEFORE, PHASES, ROLES
from forgetting.studies.text.corpus_file import REPOSITORY_CORPUS, load_corpus

CORPUS_PATH = Path(__file__).resolve().parents[1] / REPOSITORY_CORPUS


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    return yaml.safe_load(CORPUS_PATH.read_text(encoding="utf-8"))


def write(tmp_path: Path, data: Any, name: str = "bad.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_shipped_corpus_loads_and_has_every_role():
    corpus = load_corpus(CORPUS_PATH)
    assert corpus.name == "tally-project-memory"
    assert len(corpus.sha256) == 64
    assert set(corpus.roles) == set(ROLES)
    assert corpus.ids_with_role("stale") == ["stale-heroku"]
    assert corpus.ids_with_role("corrected") == ["fix-kubernetes"]
    stale, fixed = corpus.memory("stale-heroku"), corpus.memory("fix-kubernetes")
    assert stale.phases == PHASES and stale.valid == (BEFORE,)
    assert fixed.phases == (AFTER,)
    assert not corpus.available(BEFORE)[corpus.index("fix-kubernetes")]
    for phase in PHASES:
        assert corpus.type_weights(phase).sum() == pytest.approx(1.0)
    assert all(len(corpus.queries_of(t.id)) >= 3 for t in corpus.types)
    # the deployment tasks switch from the stale memory to its correction
    deploy = [corpus.queries[i] for i in corpus.queries_of("deploy")]
    assert any(q.needs[BEFORE] == ("stale-heroku",) and q.needs[AFTER] == ("fix-kubernetes",) for q in deploy)


def test_corpus_accessors(raw, tmp_path):
    corpus = load_corpus(write(tmp_path, raw, "ok.yaml"))
    assert corpus.memory_ids[corpus.index("stale-heroku")] == "stale-heroku"
    with pytest.raises(KeyError, match="no memory 'nope' in corpus"):
        corpus.index("nope")
    assert isinstance(corpus.roles, np.ndarray)
    assert corpus.queries[corpus.queries_of("deploy")[0]].type == "deploy"
    assert corpus.queries[0].needed_ever() == corpus.queries[0].needs[BEFORE]
