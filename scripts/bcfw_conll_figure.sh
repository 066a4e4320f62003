#!/usr/bin/env bash
# BCFW Figure 1d-e (CoNLL-2000, lambda = 1/n): suboptimality with the first passes in detail
# (log-spaced checkpoints from 0.01 passes) and test error, for BCFW, SSG and FW with their
# weighted averages (Lacoste-Julien et al. 2013, Section 6 and Appendix F).
# Usage: scripts/bcfw_conll_figure.sh [PASSES] [OUT] [HYDRA ARGS...]
set -euo pipefail
PASSES=${1:-20}
OUT=${2:-results/bcfw_conll}
shift $(( $# < 2 ? $# : 2 ))
ssvmbench run -m solver=bcfw,ssg,fw data=conll2000 lambda=1/n solver.passes="$PASSES" \
    eval.log_start=0.01 eval.per_decade=4 "solver.iterates=[raw,wavg]" "$@" \
    hydra.sweep.dir="$OUT/logs"
ssvmbench plot "$OUT/logs" -o "$OUT/figures" --methods bcfw bcfw-wavg ssg ssg-wavg fw
