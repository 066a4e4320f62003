#!/usr/bin/env bash
# The BCFW authors' MATLAB code (github.com/ppletscher/BCFWstruct, ICML 2013), unmodified, under
# GNU Octave beside ssvmbench on OCR: solverBCFW, solverSSG and solverFW against our bcfw, ssg
# and fw at BCFW Figure 1a-c's lambda = 0.01, 0.001, 1/n; primal, dual and duality gap per pass
# in the same order of examples (theirs, replayed to ours by +solver.order=FILE), and the
# seconds per pass:
#   BCFWSTRUCT_REPO=path scripts/peer_bcfwstruct.sh [OPTION...]
#       (data: $SSVMBENCH_DATA_DIR, as our loaders find it; OPTIONs go to peer_bcfwstruct.py,
#        e.g. --passes 5 --seeds 5 --seed-passes 3 --check-shim --jobs 2 --out FILE)
# BCFWSTRUCT_REPO names a clone of their repository (bare or not); without it, it is cloned
# from GitHub. BCFWSTRUCT_REV picks the commit (default HEAD). Nothing of theirs is kept here:
# every run extracts their tree into a temporary folder. Octave: Debian's (apt-get install -y
# octave); the OCR data are written in the ocr.mat form their loadOCRData.m reads, from ours.
# Takes about 12 minutes with the defaults under a load of 4-9 on a 2-core VM (9 same-order
# runs of 2 passes, two at a time; a pass of theirs takes 10-25 s, a logged pass about twice
# that; ours 0.05-0.1 s); --seeds adds 2 x 3 runs per seed.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-$HERE/.venv/bin/python}
[ -x "$PY" ] || PY=python3
command -v octave >/dev/null || {
    echo "peer_bcfwstruct.sh: GNU Octave is missing: apt-get update && apt-get install -y octave" >&2
    exit 1
}
TMP=
trap '[ -z "$TMP" ] || rm -rf "$TMP"' EXIT
TMP=$(mktemp -d)
. "$HERE/scripts/peer_source.sh"
summary=$(peer_source https://github.com/ppletscher/BCFWstruct "${BCFWSTRUCT_REPO:-}" \
    "${BCFWSTRUCT_REV:-}" "$TMP/src")
date; uptime; octave --version 2>/dev/null | head -1
"$PY" "$HERE/scripts/peer_bcfwstruct.py" --src "$TMP/src" --rev "$summary" \
    --data-root "${SSVMBENCH_DATA_DIR:?set SSVMBENCH_DATA_DIR to the datasets folder}" "$@"
date; uptime
