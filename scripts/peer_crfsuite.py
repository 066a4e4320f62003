"""CoNLL-2000 chunking: ssvmbench's BCFW (and FW, SSG) against CRFsuite (python-crfsuite:
averaged perceptron, passive-aggressive, L-BFGS CRF) on the same features, one thread each.

CRFsuite gets ssvmbench's own CoNLL-2000 features (every active attribute of a token, by
its id, with its value), so both sides learn from the same 116,730 attributes; CRFsuite adds
its label-bigram weights, ssvmbench its transitions and first / last label biases. Prints,
per method, the training seconds (CPU, compile excluded) after each pass / epoch and the test
chunk F1 (conlleval rules, :func:`ssvmbench.metrics.chunk_f1`). Run by
``scripts/peer_crfsuite.sh`` in its own virtual environment.
"""

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pycrfsuite

from ssvmbench.data import load_split
from ssvmbench.metrics import chunk_f1
from ssvmbench.solvers import make_solver
from ssvmbench.tasks import make_task


def items(ds, i):
    """Sentence ``i`` as CRFsuite items: one ``{attribute: value}`` per token."""
    out = []
    for t in range(ds.offsets[i], ds.offsets[i + 1]):
        p, q = ds.feat_ptr[t], ds.feat_ptr[t + 1]
        out.append({f"f{j}": float(v) for j, v in zip(ds.feat_idx[p:q], ds.feat_val[p:q])})
    return pycrfsuite.ItemSequence(out)


def f1_of(ds, predicted):
    names = np.asarray(ds.label_names)
    return chunk_f1(names[ds.labels], predicted, ds.offsets)


def crfsuite_rows(train, test, algorithm, epochs, model):
    """(epoch, CPU seconds of training, test F1): one training per epoch count (CRFsuite
    keeps no state between calls), so each row is a fresh run of that many epochs."""
    names = train.label_names
    xs = [items(train, i) for i in range(train.n)]
    ys = [[names[l] for l in train.labels[train.offsets[i]:train.offsets[i + 1]]]
          for i in range(train.n)]
    xtest = [items(test, i) for i in range(test.n)]
    rows = []
    for e in epochs:
        trainer = pycrfsuite.Trainer(algorithm=algorithm, verbose=False)
        for x, y in zip(xs, ys):
            trainer.append(x, y)
        trainer.set_params({"max_iterations": e} if algorithm != "lbfgs" else
                           {"max_iterations": e, "c2": 1.0})
        start = time.process_time()
        trainer.train(model)
        seconds = time.process_time() - start
        tagger = pycrfsuite.Tagger()
        tagger.open(model)
        predicted = [tag for x in xtest for tag in tagger.tag(x)]
        rows.append((e, seconds, f1_of(test, predicted)))
    return rows


def ssvmbench_rows(train, test, solver, passes):
    """(pass, CPU seconds of training, test F1 of each logged iterate) after every pass;
    compiled first on two sentences (compile time is not training time)."""
    tr, te = make_task(train), make_task(test)
    lam = 1.0 / tr.n
    warm = make_task(train.subset(range(2)))
    make_solver(solver, warm, lam, {}, 0).run_until(2 * warm.n)
    te.evaluate(np.zeros(te.d), with_hinge=False)
    s = make_solver(solver, tr, lam, {}, 0)
    names = np.asarray(train.label_names)
    rows, spent = [], 0.0
    for p in range(1, passes + 1):
        start = time.process_time()
        s.run_until(p * tr.n)
        spent += time.process_time() - start
        f1 = {name: f1_of(test, names[te.evaluate(w, with_hinge=False)[2]])
              for name, w, _ in s.iterates()}
        rows.append((p, spent, f1))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", required=True)
    parser.add_argument("--model", help="CRFsuite's model file (default: a temporary file)")
    args = parser.parse_args()
    model = args.model or str(Path(tempfile.mkdtemp()) / "crfsuite.model")
    split = load_split("conll2000", root=args.data_root)
    print(f"CoNLL-2000: {split.train.n} training / {split.test.n} test sentences, "
          f"{split.train.n_features} attributes, {split.train.n_labels} tags")
    for solver in ("bcfw", "fw", "ssg"):
        for p, seconds, f1 in ssvmbench_rows(split.train, split.test, solver, 5):
            shown = ", ".join(f"{k} {v:.4f}" for k, v in f1.items())
            print(f"ssvmbench {solver:4s} pass {p}: {seconds:7.2f} s CPU  F1 {shown}")
    for algorithm, epochs in (("ap", (1, 2, 3, 5)), ("pa", (1, 2, 3, 5)),
                              ("lbfgs", (10, 25, 50))):
        for e, seconds, f1 in crfsuite_rows(split.train, split.test, algorithm, epochs,
                                            model):
            print(f"crfsuite  {algorithm:5s} {e:3d} epochs: {seconds:7.2f} s CPU  F1 {f1:.4f}")


if __name__ == "__main__":
    main()
