"""Common utilities, the bottom layer: errors and their one-line messages (``errors``,
``messages``), where configs and data live (``paths``), whole-or-nothing file writes
(``files``), locks across processes and hosts (``file_lock``), whether a process or a SLURM
job still runs (``processes``, ``slurm_jobs``), plugin loading through entry points
(``plugins``), Hydra's private calls in one place (``hydra_internals``), compiled helpers
that kernels call (``inner``, ``assignment``) and the public paths that survive moves
(``moved``). Imports nothing else of ssvmbench."""
