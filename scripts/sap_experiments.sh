#!/usr/bin/env bash
# SAP (Balamurugan, Shevade, Ravindra Babu) Section V: elastic-net SSVM by SAP (Algorithm 2)
# and the L1-SSVM baseline (projected subgradient, II.7), Hamming loss (II.2), rho2 = 1 - rho1.
# Usage: scripts/sap_experiments.sh PRESET [PASSES] [OUT] [HYDRA ARGS...]
# figure1, table2 and table3 also train the L2 SSVM (BCFW, rho1 = 0) at the same C.
#   figure1  OCR partitions 0 and 6, C = 1, rho1 = 0.7: test accuracy and #NZ per pass
#   table2   POS and CoNLL-2000 (SAP features), C = 0.1, rho1 = 0.9: SAP vs L1-SSVM
#   table3   Figure 2 + Table III: POS, CoNLL-2000, Brown, C = 1, rho1 = 0.9 (best accuracy
#            within the first PASSES passes; WSJ-POS needs the LDC treebank: data=wsjpos)
#   figure3  rho1 in {0.9, 0.5, 0.3, 0.1}, C = 0.1, POS and CoNLL-2000
#   table4   C in {0.1, 1, 10}, rho1 = 0.9, POS and CoNLL-2000
# L1-SSVM's step size and l1-ball radius were chosen on OCR partition 1 (README, issue 5).
set -euo pipefail
PRESET=${1:?give a preset: figure1 table2 table3 figure3 table4}
PASSES=${2:-30}
OUT=${3:-results/sap}/$PRESET
shift $(( $# < 3 ? $# : 3 ))
COMMON="loss=hamming solver.passes=$PASSES eval.every=1 $*"
L1="solver=l1_subgradient solver.gamma0=0.1 solver.t0=1000"
L2="solver=bcfw rho1=0"  # the L2 SSVM at the same C (rho1 = 0, rho2 = 1): the #NZ to beat
PLOT="--y test_metric nnz --best-within $PASSES"

case $PRESET in
figure1)
    ssvmbench run -m solver=sap data=ocr data.fold=0,6 C=1 rho1=0.7 $COMMON \
        hydra.sweep.dir="$OUT/logs/sap"
    ssvmbench run -m $L1 solver.epsilon=1000 data=ocr data.fold=0,6 C=1 rho1=0.7 $COMMON \
        hydra.sweep.dir="$OUT/logs/l1"
    ssvmbench run -m $L2 data=ocr data.fold=0,6 C=1 $COMMON hydra.sweep.dir="$OUT/logs/l2" ;;
table2)
    ssvmbench run -m solver=sap data=pos,conll2000_sap C=0.1 rho1=0.9 $COMMON \
        hydra.sweep.dir="$OUT/logs/sap"
    ssvmbench run -m $L1 solver.epsilon=300,3000 data=pos,conll2000_sap C=0.1 rho1=0.9 \
        $COMMON hydra.sweep.dir="$OUT/logs/l1"
    ssvmbench run -m $L2 data=pos,conll2000_sap C=0.1 $COMMON hydra.sweep.dir="$OUT/logs/l2" ;;
table3)
    ssvmbench run -m solver=sap data=pos,conll2000_sap,brown C=1 rho1=0.9 $COMMON \
        hydra.sweep.dir="$OUT/logs/sap"
    ssvmbench run -m $L2 data=pos,conll2000_sap,brown C=1 $COMMON hydra.sweep.dir="$OUT/logs/l2" ;;
figure3)
    ssvmbench run -m solver=sap data=pos,conll2000_sap C=0.1 rho1=0.9,0.5,0.3,0.1 $COMMON \
        hydra.sweep.dir="$OUT/logs/sap" ;;
table4)
    ssvmbench run -m solver=sap data=pos,conll2000_sap C=0.1,1,10 rho1=0.9 $COMMON \
        hydra.sweep.dir="$OUT/logs/sap" ;;
*)
    echo "unknown preset $PRESET: choose figure1 table2 table3 figure3 table4" >&2
    exit 2 ;;
esac
ssvmbench plot "$OUT/logs" -o "$OUT/figures" $PLOT
