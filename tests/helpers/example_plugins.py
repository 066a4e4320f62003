"""The example task plugins (examples/multiclass, examples/tree), which the README's test
command and CI install: a test that needs one skips with the install command when it is
missing, and fails in CI."""

import os
from importlib.metadata import entry_points

import pytest


def require_example(kind):
    """Skip (fail under ``CI``) unless the example task plugin ``kind`` is installed."""
    if not any(point.name == kind for point in entry_points(group="ssvmbench.tasks")):
        if os.environ.get("CI"):
            pytest.fail(f"CI installs examples/{kind} (pip install ./examples/{kind})")
        pytest.skip(f"needs the example task plugin: pip install ./examples/{kind}",
                    allow_module_level=True)
