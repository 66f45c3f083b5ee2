#!/usr/bin/env python
"""Benchmark the numpy all-MiniLM-L6-v2 encoder (and sentence-transformers, if importable).

Reports sentences per second at a given batch size, and the time from process start to the
first embedding (measured in fresh subprocesses, so imports, the model digest check and weight
loading are included). The corpus is LoCoMo's distinct turns and questions (a fixed sample of
``-n``) when ``FORGETTING_LOCOMO`` names the zip, else a fixed synthetic one (``--corpus``).
Not a test.

Then the encoding paths side by side, each in a fresh process with its own BLAS setting, on
``--threads`` cores (default 2), against the floor: the corpus's floating-point operations
(from its token counts and the model's shapes) at the rate numpy's BLAS multiplies two large
matrices on those threads. Each path and the floor are measured ``--repeat`` times, the paths
interleaved, and the best kept. The paths:

* one text per call, one process on ``--threads`` BLAS threads (the chapter before issue 45);
* the texts ``--batch-size`` at a time, one process on ``--threads`` BLAS threads: in float64
  every text's tokens are columns of one product per layer, in float32 the texts of a length
  go as one stack (:mod:`forgetting.text.layers`);
* the same, ``--threads`` worker processes on one BLAS thread each (what
  ``studies/conversations/embeddings.py`` does with the in-process executor).

    python benchmarks/bench_encoder.py                      # numpy, plus torch if importable
    python benchmarks/bench_encoder.py --threads 1 -n 256   # one BLAS thread
    python benchmarks/bench_encoder.py --dtype float64 --no-reference --no-startup -n 600

``--threads`` sets OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS before numpy (or
torch) is imported, in this process and in the subprocesses; torch additionally gets
``torch.set_num_threads``. The machine's other jobs share its cores: run it on a quiet machine,
or read the ratios (every path is measured in the same minute).
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


_PATH = """
import json, sys, time
from concurrent.futures import ProcessPoolExecutor
import numpy as np

def encode(dtype, texts, batch_size):
    from forgetting.text.encoder import get_encoder
    return get_encoder(dtype).encode(texts, batch_size=batch_size).shape[0]

if __name__ == "__main__":
    job = json.loads(sys.stdin.read())
    texts, dtype, batch, workers = job["texts"], job["dtype"], job["batch_size"], job["workers"]
    if job["path"] == "per_text":
        encode(dtype, texts[:2], 1)  # load and warm up
        t0 = time.perf_counter()
        for text in texts:
            encode(dtype, [text], 1)
    elif job["path"] == "batched":
        encode(dtype, texts[:2], batch)
        t0 = time.perf_counter()
        encode(dtype, texts, batch)
    else:  # workers: texts by token count, chunks dealt to the processes
        from forgetting.text.encoder import get_encoder
        counts = [len(ids) for ids in get_encoder(dtype).token_ids(texts)]
        ordered = [t for _, t in sorted(zip(counts, texts), key=lambda p: (-p[0], p[1]))]
        size = max(1, min(job["chunk"], -(-len(ordered) // workers)))
        chunks = [ordered[i : i + size] for i in range(0, len(ordered), size)]
        with ProcessPoolExecutor(workers) as pool:
            list(pool.map(encode, [dtype] * workers, [texts[:2]] * workers, [batch] * workers))
            t0 = time.perf_counter()
            list(pool.map(encode, [dtype] * len(chunks), chunks, [batch] * len(chunks)))
    print(time.perf_counter() - t0)
"""

_GEMM = """
import sys, time
import numpy as np
a = np.random.default_rng(0).random((2048, 2048)).astype(sys.argv[1])
a @ a
best = float("inf")
for _ in range(3):
    t0 = time.perf_counter(); a @ a; best = min(best, time.perf_counter() - t0)
print(2 * 2048**3 / best)
"""


def flops_per_text(tokens: int, hidden: int, inner: int, layers: int) -> int:
    """Floating-point operations of one text's forward pass: the dense layers (query, key,
    value and output, ``4 hidden^2``, and the feed-forward pair, ``2 hidden inner``,
    multiply-adds a token) and the attention products (``2 tokens^2 hidden``), per layer."""
    return 2 * layers * (tokens * (4 * hidden * hidden + 2 * hidden * inner) + 2 * tokens * tokens * hidden)


def locomo_texts() -> list[str] | None:
    """LoCoMo's distinct turn texts and questions (as the chapter embeds them), or ``None``."""
    zip_path = os.environ.get("FORGETTING_LOCOMO")
    if not zip_path or not os.path.isfile(zip_path):
        return None
    from pathlib import Path

    from forgetting.conversations.locomo import load_locomo

    conversations = load_locomo(Path(zip_path))
    texts = {t.retrieval_text: None for c in conversations for t in c.turns}
    texts.update({q.question: None for c in conversations for q in c.questions})
    return list(texts)


def run_path(
    path: str, texts: list[str], dtype: str, batch_size: int, threads: int, env: dict[str, str]
) -> float:
    """Seconds the encoding ``path`` takes on ``texts`` in a fresh process (model load excluded)."""
    blas = "1" if path == "workers" else str(threads)
    child = {**env, **{v: blas for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}}
    job = {
        "path": path,
        "texts": texts,
        "dtype": dtype,
        "batch_size": batch_size,
        "workers": threads,
        "chunk": 200,
    }
    done = subprocess.run(
        [sys.executable, "-c", _PATH],
        input=json.dumps(job),
        env=child,
        check=True,
        capture_output=True,
        text=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def gemm_flops(dtype: str, threads: int, env: dict[str, str]) -> float:
    """FLOP/s of a 2048 x 2048 matrix product on ``threads`` BLAS threads (best of 3)."""
    child = {
        **env,
        **{v: str(threads) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")},
    }
    done = subprocess.run(
        [sys.executable, "-c", _GEMM, dtype], env=child, check=True, capture_output=True, text=True
    )
    return float(done.stdout.strip().splitlines()[-1])


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
    parser.add_argument(
        "--corpus",
        choices=("auto", "locomo", "synthetic"),
        default="auto",
        help="LoCoMo's texts if FORGETTING_LOCOMO names the zip (auto), or synthetic",
    )
    parser.add_argument("--no-paths", action="store_true", help="skip the paths against the floor")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    env = dict(os.environ)
    path_threads = args.threads if args.threads is not None else 2
    if args.threads is not None:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = env[var] = str(args.threads)
    env["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_HUB_OFFLINE"] = "1"

    import numpy as np  # after the thread variables

    from forgetting.text import MiniLMEncoder, locate_model_dir

    real = None if args.corpus == "synthetic" else locomo_texts()
    if args.corpus == "locomo" and real is None:
        parser.error("--corpus locomo needs FORGETTING_LOCOMO set to the LoCoMo zip")
    if real is not None:
        corpus = random.Random(0).sample(real, min(args.sentences, len(real)))
    else:
        corpus = make_corpus(args.sentences)
    result: dict[str, object] = {
        "corpus": "locomo" if real is not None else "synthetic",
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

    if not args.no_paths:
        flop = sum(
            flops_per_text(
                len(ids), encoder.hidden_size, encoder.layers[0]["ffn_in"][0].shape[0], encoder.num_layers
            )
            for ids in encoder.token_ids(corpus)
        )
        floor_s = flop / max(gemm_flops(args.dtype, path_threads, env) for _ in range(args.repeat))
        result["paths_cores"] = path_threads
        result["flop_per_token"] = flop / tokens
        result["floor_sentences_per_s"] = len(corpus) / floor_s
        paths = ("per_text", "batched", "workers")
        best = dict.fromkeys(paths, float("inf"))
        for _ in range(args.repeat):  # interleaved, so a burst of other jobs hits every path
            for path in paths:
                seconds = run_path(path, corpus, args.dtype, args.batch_size, path_threads, env)
                best[path] = min(best[path], seconds)
        for path in paths:
            result[f"{path}_sentences_per_s"] = len(corpus) / best[path]
            result[f"{path}_over_floor"] = floor_s / best[path]

    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            shown = f"{value:.4g}" if isinstance(value, float) else value
            print(f"{key:32s} {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
