#!/usr/bin/env bash
# chromium.sh -- Debian's headless browser for tests/papers/test_report_page.py, which drives
# results/reproduction/report.html with Selenium (skipped without it, failed in CI).
#
# Usage:
#   scripts/chromium.sh install
#       apt-get install chromium and chromium-driver if missing (as root; CI runs as root).
set -euo pipefail

readonly PACKAGES=(chromium chromium-driver)

installed() {
    [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]]
}

case "${1:-}" in
    install)
        missing=()
        for p in "${PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
        if ((${#missing[@]} == 0)); then
            echo "chromium.sh: all packages installed: ${PACKAGES[*]}" >&2
            exit 0
        fi
        [[ $(id -u) == 0 ]] || { echo "chromium.sh: run as root to install ${missing[*]}" >&2; exit 1; }
        echo "chromium.sh: installing: ${missing[*]}" >&2
        apt-get update -q >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
        ;;
    *)
        echo "usage: $0 install" >&2
        exit 2
        ;;
esac
