#!/usr/bin/env bash
# Casimir (Pillutla et al. 2018) Figures 2a, 3a, 3b on CoNLL-2003 NER, Section 4:
#   Figure 2a: train objective and test F1 against oracle calls for SGD (wavg), BCFW-wavg,
#              SVRG, SC-SVRG-const and SC-SVRG-adapt (top-K oracle, K = 5) at
#              lambda = l2reg/n, l2reg in {1, 0.1, 0.01};
#   Figure 3a: SC-SVRG-const / -adapt for several smoothing coefficients mu (lambda = 1/n);
#   Figure 3b: the same for several K.
# Learning rates were tuned on the training objective at lambda = 1/n (README, issue 4).
# Lines: mean over seeds; bands: one standard deviation (as in the paper).
# Usage: scripts/casimir_ner_figures.sh [PASSES] [SEEDS] [OUT] [HYDRA ARGS...]
#   defaults: 20 passes, seeds 0,1,2, results/casimir_ner
set -euo pipefail
PASSES=${1:-20}
SEEDS=${2:-0,1,2}
OUT=${3:-results/casimir_ner}
shift $(( $# < 3 ? $# : 3 ))
COMMON="data=conll2003 seed=$SEEDS solver.passes=$PASSES eval.every=2 $*"
FIG2="lambda=1/n,0.1/n,0.01/n $COMMON"
SMOOTH="oracle=topk oracle.K=5 oracle.mu=0.1"

ssvmbench run -m solver=bcfw $FIG2 hydra.sweep.dir="$OUT/logs/fig2/bcfw"
ssvmbench run -m solver=sgd solver.gamma0=0.1 solver.t0=1000 $FIG2 \
    hydra.sweep.dir="$OUT/logs/fig2/sgd"
ssvmbench run -m solver=svrg solver.lr=0.001 $SMOOTH $FIG2 hydra.sweep.dir="$OUT/logs/fig2/svrg"
ssvmbench run -m solver=sc_svrg solver.scheme=const,adapt solver.lr=0.001 $SMOOTH $FIG2 \
    hydra.sweep.dir="$OUT/logs/fig2/sc_svrg"
ssvmbench run -m solver=sc_svrg solver.scheme=const,adapt solver.lr=0.001 oracle=topk \
    oracle.K=5 oracle.mu=0.01,0.1,1 lambda=1/n $COMMON hydra.sweep.dir="$OUT/logs/fig3a"
ssvmbench run -m solver=sc_svrg solver.scheme=const,adapt solver.lr=0.001 oracle=topk \
    oracle.K=1,2,5,10 oracle.mu=0.1 lambda=1/n $COMMON hydra.sweep.dir="$OUT/logs/fig3b"

PLOT="--x oracle_calls --y suboptimality test_metric --band std"
ssvmbench plot "$OUT/logs/fig2" -o "$OUT/figures/figure2a" $PLOT \
    --methods bcfw-wavg sgd-wavg svrg-topk-K5-mu0.1 sc_svrg-const-topk-K5-mu0.1 \
    sc_svrg-topk-K5-mu0.1
SWEEP="--x oracle_calls --y primal test_metric --band std"
ssvmbench plot "$OUT/logs/fig3a" -o "$OUT/figures/figure3a" $SWEEP
ssvmbench plot "$OUT/logs/fig3b" -o "$OUT/figures/figure3b" $SWEEP
