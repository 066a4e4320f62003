#!/usr/bin/env bash
# The plotly.js bundle that report.html and plot --html embed: npm's
# plotly.js-basic-dist-min (scatter traces and the core components, updatemenus included:
# all the pages draw; MIT licence, kept beside it), not the full bundle of the plotly Python
# package (4 times larger: 3-D, maps, ... which the pages never use). It is vendored in
# ssvmbench/plotting/vendor/ so that `pip install .` needs no network and the pages stay
# offline.
#
#   scripts/update_plotly_js.sh [VERSION]   # default: the plotly.js of the installed plotly
#
# Vendored: plotly.js-basic-dist-min 4.1.1 (= plotly.offline.get_plotlyjs_version() of
# plotly 7.1.0). Update it with the plotly Python package (needs npm), then run
# tests/papers/test_report_page.py and re-derive the report (`ssvmbench report results/reproduction`).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${1:-$(python -c "from plotly.offline import get_plotlyjs_version as v; print(v())")}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
(cd "$WORK" && npm pack --silent "plotly.js-basic-dist-min@$VERSION" >/dev/null \
    && tar xzf plotly.js-basic-dist-min-"$VERSION".tgz)
cp "$WORK/package/plotly-basic.min.js" ssvmbench/plotting/vendor/plotly-basic.min.js
cp "$WORK/package/LICENSE" ssvmbench/plotting/vendor/plotly-basic.LICENSE
head -c 60 ssvmbench/plotting/vendor/plotly-basic.min.js | tail -c 40; echo
