"""Our Casimir Figure 2a curves at the authors' log points, over seeds: the table that shows
whether the authors' code (scripts/peer_casimir.sh, their seed 0) lies within our seed spread.

Reads the traces of a Figure 2a reproduction (``ssvmbench plot`` writes them:
``results/reproduction/casimir_figure2a_ner/traces.parquet``) and prints, for the three
SVRG-type methods at lambda = l2reg / n, their training objective (the non-smooth primal the
authors log) after epochs 1, 3, 5 and 10 (an epoch is 3 effective passes) and the test F1
after epoch 1: mean, min and max over seeds, as a Markdown table.

Usage: python scripts/casimir_seed_spread.py TRACES [--l2reg 1] [--epochs 1 3 5 10]
"""

import argparse

import numpy as np

from ssvmbench.plotting.curves import curve_labels
from ssvmbench.runlog import load_logs

METHODS = {"SVRG": "svrg-average-lr=0.02-topk-K5-mu1-ties=casimir",
           "SC-SVRG-adapt": "sc_svrg-average-extrapolation-expo-lr=0.02-topk-K5-mu2-ties=casimir",
           "SC-SVRG-const": "sc_svrg-const-average-prev_iterate-L=32-topk-K5-mu1-ties=casimir"}
PASSES_PER_EPOCH = 3


def spread(values):
    return f"{np.mean(values):.3f} ({np.min(values):.3f}-{np.max(values):.3f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces")
    parser.add_argument("--l2reg", type=float, default=1.0)
    parser.add_argument("--epochs", type=int, nargs="+", default=[1, 3, 5, 10])
    args = parser.parse_args()
    df = load_logs(args.traces)
    df = df.assign(curve=curve_labels(df))
    df = df[np.isclose(df["lambda"] * df["n"], args.l2reg, rtol=1e-6)]
    print("| method | seeds | " + " | ".join(f"epoch {e}" for e in args.epochs)
          + " | F1 after epoch 1 |")
    print("|---" * (len(args.epochs) + 3) + "|")
    for title, curve in METHODS.items():
        rows = df[df["curve"] == curve]
        cells = []
        for epoch in args.epochs:
            at = rows[np.isclose(rows["effective_pass"], PASSES_PER_EPOCH * epoch, atol=0.05)]
            cells.append(spread(at["primal"].to_numpy(float)) if len(at) else "")
        first = rows[np.isclose(rows["effective_pass"], PASSES_PER_EPOCH, atol=0.05)]
        f1 = spread(first["test_tag_f1"].to_numpy(float)) if len(first) else ""
        print(f"| {title} | {rows['seed'].nunique()} | " + " | ".join(cells) + f" | {f1} |")


if __name__ == "__main__":
    main()
