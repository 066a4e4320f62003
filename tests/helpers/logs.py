"""Run logs written by hand, whose curves are known (for plotting, the report page and the
commands that read logs)."""

import numpy as np

from ssvmbench.run.runlog import RunLog


def write_logs(root, loss="normalized_hamming"):
    """bcfw (raw, wavg) and ssg (raw) with seeds 0 and 1 at λ=0.01, one bcfw run at 0.001."""
    runs = [("bcfw", 0.01, s) for s in (0, 1)] + [("ssg", 0.01, s) for s in (0, 1)]
    for solver, lam, seed in runs + [("bcfw", 0.001, 0)]:
        iterates = ["raw", "wavg"] if solver == "bcfw" else ["raw"]
        k = len(iterates)
        attrs = {"solver": solver, "method": solver, "data": "ocr", "data_variant": "v",
                 "lambda": lam, "seed": seed, "config": {"solver": {"name": solver}},
                 "loss": loss, "git_revision": "abc123", "dataset_checksum": "d0d0"}
        run = root / f"{solver}_{lam}_{seed}"
        run.mkdir()
        with RunLog(run / "run.h5", attrs) as log:
            for p in (1, 2, 4):
                dual = 0.5 - 1 / (p + 1) - 0.01 * seed
                log.append({"iterate": iterates, "effective_pass": [float(p)] * k,
                            "oracle_calls": [p * 100] * k, "time_s": [0.1 * p] * k,
                            "eval_time_s": [0.05 * p] * k,
                            "primal": [0.5 + 1 / p + 0.01 * seed + 0.01 * j for j in range(k)],
                            "dual": [np.nan if solver == "ssg" else dual] * k,
                            "gap": [np.nan] * k, "train_loss": [0.1] * k,
                            "test_error": [0.3 - 0.02 * p] * k, "test_metric": [0.7] * k,
                            "nnz": [50] * k})
