#!/usr/bin/env bash
# pystruct 0.3.2 (its sdist from the package index, patched and rebuilt here) beside ssvmbench
# on OCR, the same split and features, one thread each, in a virtual environment of its own
# (default .venv-pystruct here):
#   scripts/peer_pystruct.sh [VENV [OPTION...]]   (data: $SSVMBENCH_DATA_DIR, as the loaders
#                                                   find it; OPTIONs go to peer_pystruct.py,
#                                                   e.g. --rounds 5)
# Offline, PYSTRUCT_REPO=path names a clone of github.com/pystruct/pystruct (bare or not).
# The 0.3.2 sdist neither builds nor runs as shipped on Python 3.11 and numpy 2, so the first
# run patches and builds it (build_pystruct); later runs keep that build while it imports.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
VENV=${1:-$HERE/.venv-pystruct}
CYTHON=3.0.12           # regenerates the two extension modules (3.x: numpy 2, Python 3.11)
RELEASE=fd70c98         # pystruct's 0.3.2 release commit, source of the .pyx files
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PIP=("$VENV/bin/pip" install -q)
TMP=
trap '[ -z "$TMP" ] || rm -rf "$TMP"' EXIT

built() {
    "$VENV/bin/python" -c "import pystruct.models.utils, pystruct.inference._viterbi, \
pystruct.learners" 2>/dev/null
}

build_pystruct() {
    local src
    TMP=$(mktemp -d)
    # pip download prepares the sdist's metadata by running its setup.py, which imports numpy
    # and passes use_2to3 (refused by setuptools >= 58): hence no build isolation, an old
    # setuptools, numpy and wheel in the environment. scikit-learn and joblib: the learners
    # import them; cvxopt: pystruct.learners/__init__.py imports NSlackSSVM and OneSlackSSVM,
    # and pystruct.inference imports its LP solver, which import cvxopt at module level (so
    # FrankWolfeSSVM and SubgradientSSVM cannot be imported without it, though they never
    # call it). ad3 (in install_requires) is not installed: --no-deps.
    "${PIP[@]}" "setuptools<58" wheel numpy "cython==$CYTHON" scikit-learn joblib cvxopt
    "$VENV/bin/pip" download -q --no-build-isolation --no-binary :all: --no-deps \
        pystruct==0.3.2 -d "$TMP"
    tar -xzf "$TMP"/pystruct-0.3.2.tar.gz -C "$TMP"
    src=$TMP/pystruct-0.3.2
    # 1. The sdist ships only the C files that Cython 0.21.1 generated, which no longer compile
    #    against Python 3.11's C API, and not their .pyx sources. Those are taken from
    #    pystruct's repository at the 0.3.2 release commit (the line numbers quoted in the
    #    shipped C files match them): $PYSTRUCT_REPO, a clone of it, else cloned from GitHub.
    local repo=${PYSTRUCT_REPO:-}
    if [ -z "$repo" ]; then
        repo=$TMP/upstream
        git clone -q --bare https://github.com/pystruct/pystruct "$repo"
    fi
    rm "$src"/src/utils.c "$src"/pystruct/inference/_viterbi.c
    for pyx in src/utils.pyx pystruct/inference/_viterbi.pyx; do
        git -C "$repo" show "$RELEASE:$pyx" > "$src/$pyx"
    done
    # 2. setup.py: drop use_2to3 (the sources are Python 3 already; setuptools >= 58 refuses
    #    it) and build the extensions from the .pyx files through Cython.
    "$VENV/bin/python" - "$src/setup.py" <<'PY'
import sys
path = sys.argv[1]
text = open(path, newline="").read()
patched = (text.replace("      use_2to3=True,\r\n", "")
           .replace('["src/utils.c"]', '["src/utils.pyx"]')
           .replace('["pystruct/inference/_viterbi.c"]', '["pystruct/inference/_viterbi.pyx"]')
           .replace("ext_modules=[", "ext_modules=cythonize([")
           .replace("include_dirs=include_dirs)],", "include_dirs=include_dirs)]),")
           .replace("import numpy as np",
                    "import numpy as np\nfrom Cython.Build import cythonize", 1))
if (patched.count("cythonize") != 2 or "include_dirs)])," not in patched
        or "use_2to3" in patched or '.c"]' in patched):
    sys.exit(f"{path}: not the setup.py this patch expects")
open(path, "w", newline="").write(patched)
PY
    # 3. numpy's aliases of the builtins (np.float, np.int, np.bool, np.object, ... removed in
    #    numpy 1.24) back to the builtins they stood for (np.int64, np.intp etc. are untouched:
    #    \b stops at letters, digits and _).
    find "$src/pystruct" -name '*.py' -exec sed -i -E \
        's/\bnp\.(float|int|bool|object|complex|str)\b/\1/g' {} +
    # 4. sklearn.externals.joblib (removed in scikit-learn 0.23) is joblib itself.
    find "$src/pystruct" -name '*.py' -exec sed -i 's/sklearn\.externals\.joblib/joblib/g' {} +
    if grep -rEn '\bnp\.(float|int|bool|object)\b|sklearn\.externals' "$src/pystruct"; then
        echo "peer_pystruct.sh: patches incomplete" >&2
        return 1
    fi
    "${PIP[@]}" --no-build-isolation --no-deps "$src"
}

"${PIP[@]}" "$HERE"
if ! built; then
    build_pystruct      # not as `built || build_pystruct`: set -e would not stop it on failure
fi
built || { echo "peer_pystruct.sh: pystruct does not import in $VENV" >&2; exit 1; }
date; uptime
NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
    "$VENV/bin/python" "$HERE/scripts/peer_pystruct.py" \
    --data-root "${SSVMBENCH_DATA_DIR:?set SSVMBENCH_DATA_DIR to the datasets folder}" "${@:2}"
date; uptime
