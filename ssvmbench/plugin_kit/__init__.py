"""Checks and timings for plugin authors, beside plotting and the estimators: does a solver
keep the contract (``conformance``: ``ssvmbench check-solver``), do a task's kernels agree
with brute force (``testing``, public as ``ssvmbench.testing``), how fast is a solver
(``bench``: ``ssvmbench bench``). May import every layer up to batch; not plotting, the
estimators, the papers or the doors."""
