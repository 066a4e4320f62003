#!/usr/bin/env bash
# Before / after figures taken in one session: each `ssvmbench bench` line of BENCHES runs
# with the code of REV (checked out into a temporary git worktree) and then with this
# checkout, one after the other, so that both see the same machine state; each side keeps its
# own numba cache. With COLD=1 each line first runs on that side's emptied cache (its
# "compile/cache load" line is the cold start), then again on the filled one (the warm start
# and the timed passes).
# Usage: [COLD=1] scripts/bench_compare.sh REV [BENCHES]   (default: scripts/benches.txt)
#   e.g. scripts/bench_compare.sh b359726 > compare.txt
set -euo pipefail
REV=${1:?usage: [COLD=1] scripts/bench_compare.sh REV [BENCHES]}
BENCHES=${2:-$(dirname "$0")/benches.txt}
COLD=${COLD:-0}
HERE=$(cd "$(dirname "$0")/.." && pwd)
OLD=$(mktemp -d)
trap 'git -C "$HERE" worktree remove --force "$OLD/src" >/dev/null 2>&1; rm -rf "$OLD"' EXIT
git -C "$HERE" worktree add --detach -q "$OLD/src" "$REV"
date; uptime

bench() {   # side, cache, arguments...
  local side=$1 cache=$2; shift 2
  if [ "$side" = before ]; then
    (cd "$OLD" && PYTHONPATH="$OLD/src" NUMBA_CACHE_DIR="$cache" python -m ssvmbench bench "$@" 2>&1) || true
  else
    (cd "$OLD" && PYTHONPATH="$HERE" NUMBA_CACHE_DIR="$cache" python -m ssvmbench bench "$@" 2>&1) || true
  fi
}

grep -v '^\s*\(#\|$\)' "$BENCHES" | while read -r line; do
  echo "=== ssvmbench bench $line"
  for side in before after; do
    cache="$OLD/numba-$side"
    if [ "$COLD" = 1 ]; then
      rm -rf "$cache"
      echo "--- $side, empty kernel cache"
      bench $side "$cache" $line | grep -E "compile/cache load|error" || true
    fi
    out=$(bench $side "$cache" $line)
    echo "--- $side"
    echo "$out" | grep -E "compile/cache load|seconds per pass|oracle calls per|us per call|checkpoint evaluation|peak memory|error" || echo "$out" | tail -3
  done
done
date
