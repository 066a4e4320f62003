#!/usr/bin/env bash
# The OCR part of BCFW Figures 1-3 (Lacoste-Julien et al. 2013, Section 6 and Appendix F):
#   Figure 1a-c: BCFW, BCFW-wavg, SSG, SSG-wavg, online-EG (SEEDS seeds each, best-worst band)
#                and the lower envelopes of FW and the 1-slack cutting plane, at lambda = 0.01,
#                0.001, 1/n;
#   Figure 2:    BCFW and FW with line search vs predefined step sizes;
#   Figure 3:    stochastic solvers with their averages (avg, wavg, tavg).
# Usage: scripts/bcfw_ocr_figures.sh [PASSES] [OUT] [SEEDS] [HYDRA ARGS...]
#   defaults: 100 passes, results/bcfw_ocr, 10 seeds; e.g. add `hydra/launcher=joblib
#   hydra.launcher.n_jobs=2` to run two jobs at a time.
set -euo pipefail
PASSES=${1:-100}
OUT=${2:-results/bcfw_ocr}
SEEDS=$(seq -s, 0 $(( ${3:-10} - 1 )))
shift $(( $# < 3 ? $# : 3 ))
LAMBDAS=0.01,0.001,1/n
COMMON="data=ocr lambda=$LAMBDAS solver.passes=$PASSES eval.log_start=0.05 eval.per_decade=4 $*"

ssvmbench run -m solver=bcfw,ssg seed=$SEEDS "solver.iterates=[raw,avg,wavg,tavg]" $COMMON \
    hydra.sweep.dir="$OUT/logs/stochastic"
ssvmbench run -m solver=online_eg seed=$SEEDS $COMMON hydra.sweep.dir="$OUT/logs/online_eg"
ssvmbench run -m solver=fw solver.step=line_search,predefined $COMMON \
    hydra.sweep.dir="$OUT/logs/batch"
# SVMstruct's epsilon = 0.1 would stop long before PASSES; the figure follows the whole path
ssvmbench run -m solver=cutting_plane solver.epsilon=1e-8 $COMMON \
    hydra.sweep.dir="$OUT/logs/cutting_plane"
ssvmbench run -m solver=bcfw solver.step=predefined seed=$SEEDS $COMMON \
    hydra.sweep.dir="$OUT/logs/bcfw_predefined"
ssvmbench plot "$OUT/logs" -o "$OUT/figures/figure1" \
    --methods bcfw bcfw-wavg ssg ssg-wavg online_eg fw-best cutting_plane-epsilon=1e-08-best
ssvmbench plot "$OUT/logs" -o "$OUT/figures/figure2" --methods bcfw bcfw-predefined fw fw-predefined
ssvmbench plot "$OUT/logs" -o "$OUT/figures/figure3" \
    --methods bcfw bcfw-wavg bcfw-tavg ssg ssg-avg ssg-wavg ssg-tavg
