"""Experiment 5 on real text: the sentence encoder, its cache, the corpus and the experiment.

Modules, in the order a reader meets them:

* :mod:`.model_files` -- where the all-MiniLM-L6-v2 files are and the digests they must have;
* :mod:`.encoder` -- the numpy MiniLM encoder (:class:`MiniLMEncoder`);
* :mod:`.cache` -- embeddings on disk, checksummed (:class:`EmbeddingCache`);
* :mod:`.corpus` / :mod:`.corpus_file` -- the corpus and how a file is read and validated
  (:func:`load_corpus`; the path is always given);
* :mod:`.similarity` -- cosines rounded so that no machine's last digits change a decision;
* :mod:`.outcome`, :mod:`.retrieval`, :mod:`.exp5` -- the world, retrieval and the episodes;
* :mod:`.summary`, :mod:`.tables` -- the numbers and table rows the chapter shows;
* :mod:`.credit` -- randomized omission and each memory's exact effect (the credit chapter).
"""

from .cache import EmbeddingCache, encode_cached
from .corpus import AFTER, BEFORE, PHASES, ROLES, Corpus
from .corpus_file import REPOSITORY_CORPUS, CorpusError, load_corpus
from .encoder import MiniLMEncoder, get_encoder
from .exp5 import RealTextRun, RealTextWorld, run_episodes
from .model_files import EMBEDDING_DIM, ModelDigestError, ModelNotInstalledError, locate_model_dir
from .outcome import OutcomeModel
from .retrieval import CorpusEmbeddings, embed_corpus, retrieve

__all__ = [
    "AFTER",
    "BEFORE",
    "EMBEDDING_DIM",
    "PHASES",
    "REPOSITORY_CORPUS",
    "ROLES",
    "Corpus",
    "CorpusEmbeddings",
    "CorpusError",
    "EmbeddingCache",
    "MiniLMEncoder",
    "ModelDigestError",
    "ModelNotInstalledError",
    "OutcomeModel",
    "RealTextRun",
    "RealTextWorld",
    "embed_corpus",
    "encode_cached",
    "get_encoder",
    "load_corpus",
    "locate_model_dir",
    "retrieve",
    "run_episodes",
]
