"""Compiled-kernel management, above the solvers: where ssvmbench's numba kernels are cached
(``kernel_home``), under which lock (``cache_lock``), keyed by the sources they compile in so
that a plugin edit recompiles only what depends on it (``kernel_sources``, ``keyed_cache``),
and the cold start that compiles a run's kernels in two processes (``coldstart``,
``warm_checkpoint``). May import common, data, tasks and solvers."""
