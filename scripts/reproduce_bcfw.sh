#!/usr/bin/env bash
# Every figure of BCFW (Lacoste-Julien et al. 2013: Figures 1a-c, 1d-e, 1f, 2, 3, 4, 5) from
# nothing: the presets configs/experiment/bcfw_*.yaml, run and plotted.
# Usage: scripts/reproduce_bcfw.sh [full|smoke] [ssvmbench reproduce options...]
#   e.g. scripts/reproduce_bcfw.sh full --overrides hydra/launcher=joblib hydra.launcher.n_jobs=2
# Logs: results/reproduce/SIZE/logs/SWEEP/, figures: results/reproduce/SIZE/PRESET/. Run the
# same command again after an interruption: finished runs are skipped.
set -euo pipefail
SIZE=${1:-full}
shift $(( $# > 0 ? 1 : 0 ))
exec ssvmbench reproduce bcfw --size "$SIZE" "$@"
