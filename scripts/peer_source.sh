# Sourced by the peer scripts: the peer's source tree at one commit, extracted from a clone.
#   peer_source URL REPO REV DEST
# REPO: a clone of URL (bare or not; empty: URL is cloned bare into DEST/../upstream), REV the
# commit (empty: HEAD); the tree goes to DEST (created). Prints the commit's one-line summary.
peer_source() {
    local url=$1 repo=$2 rev=${3:-HEAD} dest=$4
    if [ -z "$repo" ]; then
        repo=$(dirname "$dest")/upstream
        git clone -q --bare "$url" "$repo" || return
    fi
    rev=$(git -C "$repo" rev-parse "$rev^{commit}") || return
    mkdir "$dest" || return
    git -C "$repo" archive "$rev" | tar -x -C "$dest" || return
    git -C "$repo" log -1 --format='%h (%cs) %s' "$rev"
}
