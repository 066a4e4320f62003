"""ssvmbench: reproduce and extend structural-SVM optimizer benchmarks."""

__version__ = "0.1.0"


def __getattr__(name):
    """``ssvmbench.ChainSSVM`` (imported on first use, so the command line stays light)."""
    if name == "ChainSSVM":
        from ssvmbench.estimator import ChainSSVM
        return ChainSSVM
    raise AttributeError(f"module 'ssvmbench' has no attribute {name!r}")
