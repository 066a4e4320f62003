#!/usr/bin/env bash
# Every figure and table of SAP (Balamurugan et al.: Figures 1, 2, 3 and Tables II, III, IV) from
# nothing: the presets configs/experiment/sap_*.yaml, run and plotted.
# Usage: scripts/reproduce_sap.sh [full|smoke] [ssvmbench reproduce options...]
#   e.g. scripts/reproduce_sap.sh full --overrides hydra/launcher=joblib hydra.launcher.n_jobs=2
# Logs: results/reproduce/SIZE/logs/SWEEP/, figures: results/reproduce/SIZE/PRESET/. Run the
# same command again after an interruption: finished runs are skipped.
set -euo pipefail
SIZE=${1:-full}
shift $(( $# > 0 ? 1 : 0 ))
exec ssvmbench reproduce sap --size "$SIZE" "$@"
