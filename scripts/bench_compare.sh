#!/usr/bin/env bash
# Before / after figures taken in one session: each `ssvmbench bench` line of BENCHES runs
# with the code of REV (checked out into a temporary git worktree, its own numba cache) and
# then with this checkout, one after the other, so that both see the same machine state.
# Usage: scripts/bench_compare.sh REV [BENCHES]   (default BENCHES: scripts/benches.txt)
#   e.g. scripts/bench_compare.sh b359726 > compare.txt
set -euo pipefail
REV=${1:?usage: scripts/bench_compare.sh REV [BENCHES]}
BENCHES=${2:-$(dirname "$0")/benches.txt}
HERE=$(cd "$(dirname "$0")/.." && pwd)
OLD=$(mktemp -d)
trap 'git -C "$HERE" worktree remove --force "$OLD/src" >/dev/null 2>&1; rm -rf "$OLD"' EXIT
git -C "$HERE" worktree add --detach -q "$OLD/src" "$REV"
date; uptime
grep -v '^\s*\(#\|$\)' "$BENCHES" | while read -r line; do
  echo "=== ssvmbench bench $line"
  for side in before after; do
    if [ $side = before ]; then
      out=$(cd "$OLD" && PYTHONPATH="$OLD/src" NUMBA_CACHE_DIR="$OLD/numba" \
            python -m ssvmbench bench $line 2>&1) || true
    else
      out=$(cd "$OLD" && python -m ssvmbench bench $line 2>&1) || true
    fi
    echo "--- $side"
    echo "$out" | grep -E "seconds per pass|oracle calls per|us per call|checkpoint evaluation|peak memory|error" || echo "$out" | tail -3
  done
done
date
