"""One run, config to run log: the config composed from the command line (``compose``), its
settings read once (``settings``), the run itself (``runner``: data -> task -> solver ->
checkpoints), its folder, lock and saved state (``rundir``, ``runlock``), its HDF5 log and
per-pass traces (``runlog``, ``traces``), checkpoints (``monitor``), provenance, stop
signals, one job of a batch in this process (``job``) and the Hydra app behind ``ssvmbench
run`` (``app``). May import common, data, tasks, solvers and compiled."""
