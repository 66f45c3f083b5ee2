"""Experiment 5 on real text: the corpus, the outcome model, retrieval and the experiment.

Modules, in the order a reader meets them:

* :mod:`.corpus` / :mod:`.corpus_file` -- the corpus and how a file is read and validated
  (:func:`load_corpus`; the path is always given);
* :mod:`.outcome`, :mod:`.retrieval`, :mod:`.exp5` -- the world, retrieval and the episodes;
* :mod:`.summary`, :mod:`.tables` -- the numbers and table rows the chapter shows;
* :mod:`.depth`, :mod:`.shift` -- the shift's derivation and the episode of the phase shift;
* :mod:`.credit` -- randomized omission and each memory's exact effect (the credit chapter).

The encoder and its cache are the library's, :mod:`forgetting.text`.
"""

from .corpus import AFTER, BEFORE, PHASES, ROLES, Corpus
from .corpus_file import REPOSITORY_CORPUS, CorpusError, load_corpus
from .exp5 import RealTextRun, RealTextWorld, run_episodes
from .outcome import OutcomeModel
from .retrieval import CorpusEmbeddings, embed_corpus, retrieve

__all__ = [
    "AFTER",
    "BEFORE",
    "PHASES",
    "REPOSITORY_CORPUS",
    "ROLES",
    "Corpus",
    "CorpusEmbeddings",
    "CorpusError",
    "OutcomeModel",
    "RealTextRun",
    "RealTextWorld",
    "embed_corpus",
    "load_corpus",
    "retrieve",
    "run_episodes",
]
