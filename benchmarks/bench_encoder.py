#!/usr/bin/env python
"""Benchmark the numpy all-MiniLM-L6-v2 encoder (and sentence-transformers, if importable).

Reports sentences per second at a given batch size on a fixed synthetic corpus, and the time
from process start to the first embedding (measured in fresh subprocesses, so imports, the
model digest check and weight loading are included). Not a test.

    python benchmarks/bench_encoder.py                      # numpy, plus torch if importable
    python benchmarks/bench_encoder.py --threads 1 -n 256   # one BLAS thread
    python benchmarks/bench_encoder.py --no-reference

``--threads`` sets OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS before numpy (or
torch) is imported, in this process and in the start-up subprocesses; torch additionally gets
``torch.set_num_threads``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time

_WORDS = [
    "memory", "agent", "forget", "recall", "retention", "decay", "window", "stability",
    "episode", "outcome", "success", "failure", "retrieval", "embedding", "vector", "sentence",
    "model", "worth", "evidence", "stale", "fact", "the", "a", "of",
    "and", "to", "in", "is", "that", "it", "was", "for",
    "on", "with", "as", "by", "at", "from", "this", "be",
    "are", "or", "an", "which", "one", "all", "were", "would",
    "there", "their", "has", "been", "if", "more", "when", "will",
    "up", "out", "so", "can", "said", "what", "about", "who",
    "no", "into", "café", "naïve", "東京", "🙂", "2024", "3.14",
    "über", "señor",
]  # fmt: skip

_STARTUP_NUMPY = """
import time; t0 = time.perf_counter()
from forgetting.text.encoder import MiniLMEncoder
enc = MiniLMEncoder(dtype={dtype!r})
enc.encode(["hello world"])
print(time.perf_counter() - t0)
"""

_STARTUP_TORCH = """
import time; t0 = time.perf_counter()
import os
os.environ["HF_HUB_OFFLINE"] = "1"
from forgetting.text.model_files import locate_model_dir
from sentence_transformers import SentenceTransformer
{threads}
model = SentenceTransformer(str(locate_model_dir()), device="cpu", local_files_only=True)
model.encode(["hello world"])
print(time.perf_counter() - t0)
"""


def make_corpus(n: int, seed: int = 0) -> list[str]:
    """``n`` deterministic sentences of 4–40 words."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(4, 40))]
        out.append(" ".join(words).capitalize() + ".")
    return out


def startup_seconds(code: str, env: dict[str, str]) -> tuple[float, float]:
    """(seconds to first embedding inside the process, wall seconds including interpreter)."""
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    return float(done.stdout.strip().splitlines()[-1]), wall


def throughput(encode, corpus: list[str], batch_size: int, repeat: int) -> float:
    encode(corpus[:batch_size], batch_size)  # warm-up
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        encode(corpus, batch_size)
        best = min(best, time.perf_counter() - t0)
    return len(corpus) / best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--sentences", type=int, default=512, help="corpus size (512)")
    parser.add_argument("-b", "--batch-size", type=int, default=32, help="batch size (32)")
    parser.add_argument("-r", "--repeat", type=int, default=3, help="timed runs, best kept (3)")
    parser.add_argument("--threads", type=int, default=None, help="BLAS/torch threads")
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    parser.add_argument("--no-reference", action="store_true", help="skip sentence-transformers")
    parser.add_argument("--no-startup", action="store_true", help="skip start-up timing")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    env = dict(os.environ)
    if args.threads is not None:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = env[var] = str(args.threads)
    env["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_HUB_OFFLINE"] = "1"

    import numpy as np  # after the thread variables

    from forgetting.text import MiniLMEncoder, locate_model_dir

    corpus = make_corpus(args.sentences)
    result: dict[str, object] = {
        "sentences": len(corpus),
        "batch_size": args.batch_size,
        "threads": args.threads or os.cpu_count(),
        "dtype": args.dtype,
    }

    encoder = MiniLMEncoder(dtype=args.dtype)
    tokens = sum(len(ids) for ids in encoder.token_ids(corpus))
    result["mean_tokens"] = tokens / len(corpus)
    result["numpy_sentences_per_s"] = throughput(
        lambda s, b: encoder.encode(s, batch_size=b), corpus, args.batch_size, args.repeat
    )
    if not args.no_startup:
        inside, wall = startup_seconds(_STARTUP_NUMPY.format(dtype=args.dtype), env)
        result["numpy_first_embedding_s"] = inside
        result["numpy_first_embedding_wall_s"] = wall

    reference = None
    if not args.no_reference:
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            result["reference"] = f"not importable: {exc}"
        else:
            if args.threads is not None:
                torch.set_num_threads(args.threads)
            reference = SentenceTransformer(str(locate_model_dir()), device="cpu", local_files_only=True)
            if args.dtype == "float64":
                reference = reference.to(torch.float64)

            def ref_encode(s: list[str], b: int) -> np.ndarray:
                with torch.inference_mode():
                    return reference.encode(s, batch_size=b, convert_to_numpy=True)

            result["torch_version"] = torch.__version__
            result["torch_sentences_per_s"] = throughput(ref_encode, corpus, args.batch_size, args.repeat)
            result["numpy_over_torch_speed"] = (
                result["numpy_sentences_per_s"] / result["torch_sentences_per_s"]
            )
            diff = np.abs(
                encoder.encode(corpus, args.batch_size).astype(np.float64)
                - ref_encode(corpus, args.batch_size).astype(np.float64)
            )
            result["max_abs_diff"] = float(diff.max())
            if not args.no_startup:
                threads = f"import torch; torch.set_num_threads({args.threads})" if args.threads else ""
                inside, wall = startup_seconds(_STARTUP_TORCH.format(threads=threads), env)
                result["torch_first_embedding_s"] = inside
                result["torch_first_embedding_wall_s"] = wall

    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            shown = f"{value:.4g}" if isinstance(value, float) else value
            print(f"{key:32s} {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
