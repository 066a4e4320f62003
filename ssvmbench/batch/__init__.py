"""Batches of runs, above one run: a batch's jobs and their outcomes (``jobs``), its plan on
disk (``plan``), the launchers that run it locally or as one SLURM array (``launchers/``),
submit-and-log-off (``detach``), where a batch stands from any shell (``status``) and one
row per run of its logs (``results``). A new launcher goes in ``launchers/``. May import
common, data, tasks, solvers, compiled and run."""
