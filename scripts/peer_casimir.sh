#!/usr/bin/env bash
# The Casimir authors' own code (github.com/krishnap25/casimir, NeurIPS 2018; its main_ner.py
# with the settings of its scripts/named_entity_recognition.sh) beside ssvmbench on CoNLL-2003
# NER, Figure 2a's SVRG, SC-SVRG-adapt and SC-SVRG-const: training objective per epoch side by
# side, one thread per run, in a virtual environment of its own (default .venv-casimir here):
#   CASIMIR_REPO=path scripts/peer_casimir.sh [VENV [OPTION...]]
#       (data: $SSVMBENCH_DATA_DIR/conll2003/eng.{train,testa,testb}; OPTIONs go to
#        peer_casimir.py, e.g. --methods svrg --budget 480 --epochs 10 --min-epochs 5 --jobs 2)
# CASIMIR_REPO names a clone of their repository (bare or not); without it, it is cloned from
# GitHub. CASIMIR_REV picks the commit (default HEAD). Nothing of theirs is kept here: every
# run extracts their tree into a temporary folder, patches it for Python 3.11 and numpy 2
# (build_casimir) and builds its two Cython modules in place with the venv's Cython and numpy.
# Takes about 20 minutes with the defaults on 2 free cores (their epoch: about 2 minutes, a
# third of it their own logging; each of their methods runs within --budget 480 s, SVRG at
# least --min-epochs 5; ours, all six runs: about 4 minutes).
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
VENV=${1:-$HERE/.venv-casimir}
CYTHON="cython>=3.0,<3.2"   # 3.x: numpy 2 and Python 3.11 (their environment.yml: any cython)
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PIP=("$VENV/bin/pip" install -q)
TMP=
trap '[ -z "$TMP" ] || rm -rf "$TMP"' EXIT
TMP=$(mktemp -d)

build_casimir() {   # $1: their source tree, extracted
    local ner=$1/casimir/data/named_entity_recognition
    # 1. numpy's aliases of the builtins (np.int, np.object, ... removed in numpy 1.24) back to
    #    the builtins they stood for: reader.py (NerDataset, dtype=np.object), viterbi.pyx
    #    (dtype=np.int back-pointer arrays), the BCFW and localization code (not run here).
    #    \b stops at letters, digits and _: np.int64, np.float64_t, np.int_t are untouched.
    find "$1/casimir" \( -name '*.py' -o -name '*.pyx' \) -exec sed -i -E \
        's/\bnp\.(float|int|bool|object|complex|str)\b/\1/g' {} +
    # 2. viterbi.pyx types those arrays np.ndarray[np.int_t, ...] with long[:] views; numpy 2's
    #    Cython declarations have no int_t any more ("viterbi.pyx:25:22: Invalid type"). It was
    #    C long, 64 bits on Linux x86-64, as np.int64_t is, and as the int arrays of patch 1 are.
    sed -i 's/\bnp\.int_t\b/np.int64_t/g' "$ner/viterbi.pyx"
    if grep -rEn '\bnp\.(float|int|bool|object)\b|\bnp\.int_t\b' "$1/casimir"; then
        echo "peer_casimir.sh: patches incomplete" >&2
        return 1
    fi
    # their scripts/compile_cython.sh: setup.py build_ext --inplace in that folder
    (cd "$ner" && "$VENV/bin/python" setup.py -q build_ext --inplace >"$TMP/build.log" 2>&1) || {
        tail -30 "$TMP/build.log" >&2
        return 1
    }
}

# (pip's warnings about index locations of this machine's pip configuration are dropped)
"${PIP[@]}" "$HERE" numpy "$CYTHON" setuptools scikit-learn 2>&1 \
    | { grep -v 'is ignored: it is neither a file nor a directory' || true; }
. "$HERE/scripts/peer_source.sh"
summary=$(peer_source https://github.com/krishnap25/casimir "${CASIMIR_REPO:-}" \
    "${CASIMIR_REV:-}" "$TMP/src")
build_casimir "$TMP/src"
PYTHONPATH=$TMP/src "$VENV/bin/python" -c "import casimir.data.named_entity_recognition" || {
    echo "peer_casimir.sh: their NER modules do not import after the build" >&2
    exit 1
}
date; uptime
NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
    "$VENV/bin/python" "$HERE/scripts/peer_casimir.py" --casimir-src "$TMP/src" \
    --casimir-rev "$summary" \
    --data-root "${SSVMBENCH_DATA_DIR:?set SSVMBENCH_DATA_DIR to the datasets folder}" "${@:2}"
date; uptime
