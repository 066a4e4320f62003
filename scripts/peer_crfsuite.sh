#!/usr/bin/env bash
# CRFsuite (python-crfsuite, from the package index) beside ssvmbench on CoNLL-2000, the same
# features, one thread each, in a virtual environment of its own (default .venv-crfsuite here):
#   scripts/peer_crfsuite.sh [VENV [OPTION...]]   (data: $SSVMBENCH_DATA_DIR, as the loaders
#                                                   find it; OPTIONs go to peer_crfsuite.py,
#                                                   e.g. --rounds 5)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
VENV=${1:-$HERE/.venv-crfsuite}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q python-crfsuite "$HERE"
date; uptime
NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
    "$VENV/bin/python" "$HERE/scripts/peer_crfsuite.py" \
    --data-root "${SSVMBENCH_DATA_DIR:?set SSVMBENCH_DATA_DIR to the datasets folder}" "${@:2}"
date; uptime
