#!/usr/bin/env bash
# The edit-compile loop of a task plugin (docs/benchmarks.md, "Editing a task plugin"): on an
# empty kernel cache, `check-solver bcfw` cold and warm, a built-in run (BCFW, 5 % of OCR, one
# pass) and a run of the multiclass plugin's task, twice each; then a one-line edit of the
# plugin's task.py and those runs again; then another one-line edit and `check-solver bcfw`.
# CODE: the ssvmbench checkout to time (put first on PYTHONPATH; e.g. `git archive REV` of an
# older revision unpacked); PLUGIN: a copy of examples/multiclass installed with
# `pip install -e PLUGIN` (it is edited, then put back). Each side gets its own empty per-user
# cache (XDG_CACHE_HOME), so ssvmbench chooses its kernel folders as for a user.
# Usage: scripts/bench_plugin_edit.sh CODE PLUGIN WORKDIR > figures.txt
set -uo pipefail
CODE=${1:?usage: scripts/bench_plugin_edit.sh CODE PLUGIN WORKDIR}
PLUGIN=${2:?usage}; WORK=${3:?usage}
TASK=$PLUGIN/ssvmbench_multiclass/task.py
export XDG_CACHE_HOME=$WORK/cache PYTHONPATH=$CODE
unset NUMBA_CACHE_DIR
rm -rf "$WORK"; mkdir -p "$WORK/cache"
edit() { sed -i "s/^_CUTOFF = -[0-9.]* /_CUTOFF = $1 /" "$TASK"; echo "edited: $(grep -n '^_CUTOFF' "$TASK")"; }
step() {    # name, ssvmbench arguments...
  local name=$1; shift
  echo "== $name: $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -f "TIME $name %e s wall, %U s user %S s sys" python -m ssvmbench "$@" \
    > "$WORK/$name.log" 2>&1
  grep -E "^TIME|compiling kernels|every check passed|failed" "$WORK/$name.log"
}
run() { step "$1" run solver=bcfw "data=$2" +data.subset=0.05 solver.passes=1 \
          "hydra.run.dir=$WORK/runs/$1"; }
date; uptime
edit -40.0
step check_cold check-solver bcfw
step check_warm check-solver bcfw
run run_ocr_first ocr
run run_ocr_warm ocr
run run_letters_first ocr_letters
run run_letters_warm ocr_letters
edit -40.5
run run_ocr_after_edit ocr
run run_letters_after_edit ocr_letters
edit -41.0
step check_after_edit check-solver bcfw
edit -40.0
for log in "$WORK"/runs/*/run.h5; do
  python -c "import h5py, sys; print(sys.argv[1], 'jit_s', round(float(h5py.File(sys.argv[1]).attrs['jit_s']), 2))" "$log"
done
