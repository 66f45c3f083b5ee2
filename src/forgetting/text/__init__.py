"""The sentence encoder: all-MiniLM-L6-v2 in plain numpy, its model files, its cache.

Modules, in the order a reader meets them:

* :mod:`.model_files` -- where the all-MiniLM-L6-v2 files are and the digests they must have;
* :mod:`.encoder` -- the numpy MiniLM encoder (:class:`MiniLMEncoder`), built on :mod:`.layers`;
* :mod:`.cache` -- embeddings on disk, checksummed (:class:`EmbeddingCache`);
* :mod:`.similarity` -- cosines rounded so that no machine's last digits change a decision.

Experiment 5, which uses them on real sentences, is the book's study,
:mod:`forgetting.studies.text`.
"""

from .cache import EmbeddingCache, encode_cached
from .encoder import MiniLMEncoder, get_encoder
from .model_files import EMBEDDING_DIM, ModelDigestError, ModelNotInstalledError, locate_model_dir

__all__ = [
    "EMBEDDING_DIM",
    "EmbeddingCache",
    "MiniLMEncoder",
    "ModelDigestError",
    "ModelNotInstalledError",
    "encode_cached",
    "get_encoder",
    "locate_model_dir",
]
