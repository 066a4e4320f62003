#!/usr/bin/env bash
# Every figure and table of Casimir (Pillutla et al. 2018: Figures 2a, 2b, 3a, 3b; the NER
# figures with the authors' published settings) from nothing: the presets
# configs/experiment/casimir_*.yaml, run and plotted.
# Usage: scripts/reproduce_casimir.sh [full|smoke] [ssvmbench reproduce options...]
#   e.g. scripts/reproduce_casimir.sh full --overrides hydra/launcher=joblib hydra.launcher.n_jobs=2
# Logs: results/reproduce/SIZE/logs/SWEEP/, figures: results/reproduce/SIZE/PRESET/. Run the
# same command again after an interruption: finished runs are skipped.
set -euo pipefail
SIZE=${1:-full}
shift $(( $# > 0 ? 1 : 0 ))
exec ssvmbench reproduce casimir --size "$SIZE" "$@"
