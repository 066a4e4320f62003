#!/usr/bin/env bash
# BCFW Figure 1f and Figure 5 (word alignment as bipartite matching, lambda = 0.001): BCFW,
# SSG and their weighted averages (SEEDS seeds, best-worst band), the lower envelopes of FW and
# the 1-slack cutting plane; suboptimality and test AER. Our training set is the 137 gold pairs
# available here, not the paper's 5,000 (README, data=alignment).
# Usage: scripts/bcfw_matching_figure.sh [PASSES] [OUT] [SEEDS] [HYDRA ARGS...]
set -euo pipefail
PASSES=${1:-500}
OUT=${2:-results/bcfw_matching}
SEEDS=$(seq -s, 0 $(( ${3:-10} - 1 )))
shift $(( $# < 3 ? $# : 3 ))
COMMON="data=alignment lambda=0.001 solver.passes=$PASSES eval.every=10 eval.log_start=0.05 $*"

ssvmbench run -m solver=bcfw,ssg seed=$SEEDS "solver.iterates=[raw,wavg]" $COMMON \
    hydra.sweep.dir="$OUT/logs/stochastic"
ssvmbench run -m solver=fw $COMMON hydra.sweep.dir="$OUT/logs/fw"
ssvmbench run -m solver=cutting_plane solver.epsilon=1e-8 $COMMON \
    hydra.sweep.dir="$OUT/logs/cutting_plane"
ssvmbench plot "$OUT/logs" -o "$OUT/figures" --y suboptimality test_error \
    --methods bcfw bcfw-wavg ssg ssg-wavg fw-best cutting_plane-epsilon=1e-08-best
