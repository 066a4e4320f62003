"""ssvmbench: reproduce and extend structural-SVM optimizer benchmarks."""

__version__ = "0.1.0"
