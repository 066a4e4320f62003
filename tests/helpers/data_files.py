"""Where the tests find real data: where the package itself reads it, so that a file the
README's first command fetched is found. That is ``$SSVMBENCH_DATA_DIR`` when it is set
(CI points it at the shared datasets folder), else the package's own data root
(:func:`ssvmbench.common.paths.default_data_root`, ``~/.cache/ssvmbench/datasets`` on Linux),
where ``ssvmbench data fetch NAME`` and runs put data. Tests that run the command line rely
on the package reading the same folder, so a file found only in the other folder is named
in the reason, not used.

A test needing a missing file skips with a reason that says how the file gets there, except
in CI (``CI`` set), where it fails."""

import os

import pytest

from ssvmbench.common import paths
from ssvmbench.data.fetch import load_manifest


def root_with(relpath):
    """The data root the package reads, which must hold ``relpath`` (a path under a data
    root, e.g. ``ocr/letters.pickle``): else the test skips, or in CI fails, with
    :func:`missing_reason`."""
    root = paths.data_root()
    if (root / relpath).exists():
        return root
    reason = missing_reason(root, relpath)
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def missing_reason(root, relpath):
    """Why ``root`` lacks ``relpath`` and how it gets there, in one line."""
    default = paths.default_data_root().expanduser().resolve()
    if root != default and (default / relpath).exists():
        return (f"needs {root / relpath}: SSVMBENCH_DATA_DIR={root} does not hold it, the "
                f"package's own data root {default} does; unset SSVMBENCH_DATA_DIR, or run "
                f"`ssvmbench data fetch {relpath.split('/')[0]}`")
    dataset, spec = _manifest_entry(relpath)
    if spec is None:
        how = ("it is not in ssvmbench's dataset manifest: put it there by hand, or set "
               "SSVMBENCH_DATA_DIR to a folder that holds it")
    elif spec["sources"]:
        how = (f"`ssvmbench data fetch {dataset}` puts it there (or set SSVMBENCH_DATA_DIR "
               "to a folder that holds it)")
    else:
        how = " ".join(load_manifest()[dataset].get("obtain", "it has no download").split())
    return f"needs {root / relpath}: {how}"


def _manifest_entry(relpath):
    """``(dataset, file entry)`` of the manifest's dataset that lists ``relpath``, or
    ``(None, None)``."""
    for dataset, entry in load_manifest().items():
        if relpath in entry.get("files", {}):
            return dataset, entry["files"][relpath]
    return None, None
