"""CoNLL-2000 chunking: ssvmbench's BCFW (and FW, SSG) against CRFsuite (python-crfsuite:
averaged perceptron, passive-aggressive, L-BFGS CRF) on the same features, one thread each.

CRFsuite gets ssvmbench's own CoNLL-2000 features (every active attribute of a token, by
its id, with its value), so both sides learn from the same 116,730 attributes; CRFsuite adds
its label-bigram weights, ssvmbench its transitions and first / last label biases.

Prints first, per method, the test chunk F1 (conlleval rules, :func:`ssvmbench.metrics.
chunk_f1`) after each pass / epoch count, with the training CPU seconds of that run; then the
timing, in interleaved rounds (:mod:`peer_rounds`): in each round a fresh ssvmbench solver's
passes (compile excluded: compiled first on two sentences; the seconds per pass are the
training's CPU seconds over the passes, evaluation outside) and, right after it, a fresh
CRFsuite training's epochs. CRFsuite keeps no state between ``train`` calls, and a call
first generates its features (its setup); its seconds per epoch are the mean of
the per-iteration seconds that CRFsuite itself logs (``Trainer.logparser.iterations``, each
``time``: CPU time, C's ``clock()``, from the start to the end of the iteration), which leave
the setup out by construction; appending the items (``Trainer.append``) is not timed at all.
The setup (the ``train`` call's CPU seconds less its iterations) is shown per round. Run by
``scripts/peer_crfsuite.sh`` in its own virtual environment.
"""

import argparse
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pycrfsuite
from peer_rounds import loads, run_rounds, summary

from ssvmbench.data import load_split
from ssvmbench.metrics import chunk_f1
from ssvmbench.solvers import make_solver
from ssvmbench.tasks import make_task

# (peer, ours) pairs whose ratios the summary shows
PAIRS = [("crfsuite ap", "ssvmbench bcfw"), ("crfsuite ap", "ssvmbench ssg"),
         ("crfsuite pa", "ssvmbench bcfw"), ("crfsuite lbfgs", "ssvmbench fw")]


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


class Crfsuite:
    """The training set as CRFsuite items (built once) and trainings of it."""

    def __init__(self, train):
        names = train.label_names
        self.xs = [items(train, i) for i in range(train.n)]
        self.ys = [[names[l] for l in train.labels[train.offsets[i]:train.offsets[i + 1]]]
                   for i in range(train.n)]

    def train(self, algorithm, epochs, model):
        """A fresh training of ``epochs`` epochs (iterations): (CPU seconds of the ``train``
        call, CRFsuite's logged seconds per iteration). The items are appended before."""
        trainer = pycrfsuite.Trainer(algorithm=algorithm, verbose=False)
        for x, y in zip(self.xs, self.ys):
            trainer.append(x, y)
        trainer.set_params({"max_iterations": epochs} if algorithm != "lbfgs" else
                           {"max_iterations": epochs, "c2": 1.0})
        start = time.process_time()
        trainer.train(model)
        seconds = time.process_time() - start
        logged = [it["time"] for it in trainer.logparser.iterations]
        if len(logged) != epochs:
            raise RuntimeError(f"crfsuite {algorithm}: {len(logged)} iterations logged, "
                               f"{epochs} asked for")
        return seconds, logged

    def measure(self, algorithm, epochs, model):
        """A round's measurement: seconds per epoch (CRFsuite's logged), and the setup."""
        def run():
            seconds, logged = self.train(algorithm, epochs, model)
            return {f"crfsuite {algorithm}": sum(logged) / epochs,
                    f"crfsuite {algorithm} setup": seconds - sum(logged)}
        return run


def crfsuite_rows(peer, test, algorithm, epochs, model):
    """(epochs, CPU seconds of the training, test F1): one training per epoch count."""
    xtest = [items(test, i) for i in range(test.n)]
    rows = []
    for e in epochs:
        seconds, _ = peer.train(algorithm, e, model)
        tagger = pycrfsuite.Tagger()
        tagger.open(model)
        predicted = [tag for x in xtest for tag in tagger.tag(x)]
        rows.append((e, seconds, f1_of(test, predicted)))
    return rows


def compile_solver(train, solver):
    """Compiles ``solver`` on two sentences (compile time is not training time)."""
    warm = make_task(train.subset(range(2)))
    make_solver(solver, warm, 1.0 / warm.n, {}, 0).run_until(2 * warm.n)


def ssvmbench_rows(tr, te, solver, passes):
    """(pass, CPU seconds of training, test F1 of each logged iterate) after every pass."""
    s = make_solver(solver, tr, 1.0 / tr.n, {}, 0)
    names = np.asarray(tr.dataset.label_names)
    rows, spent = [], 0.0
    for p in range(1, passes + 1):
        start = time.process_time()
        s.run_until(p * tr.n)
        spent += time.process_time() - start
        f1 = {name: f1_of(te.dataset, names[te.evaluate(w, with_hinge=False)[2]])
              for name, w, _ in s.iterates()}
        rows.append((p, spent, f1))
    return rows


def ssvmbench_pass(tr, solver, passes):
    """A round's measurement: a fresh solver's CPU seconds per pass over ``passes``."""
    def run():
        s = make_solver(solver, tr, 1.0 / tr.n, {}, 0)
        start = time.process_time()
        s.run_until(passes * tr.n)
        return {f"ssvmbench {solver}": (time.process_time() - start) / passes}
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", required=True)
    parser.add_argument("--model", help="CRFsuite's model file (default: a temporary file)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved timing rounds (default 3)")
    parser.add_argument("--passes", type=int, default=5,
                        help="ssvmbench passes and CRFsuite AP / PA epochs per timed run "
                             "(default 5)")
    parser.add_argument("--lbfgs-iterations", type=int, default=10,
                        help="CRFsuite L-BFGS iterations per timed run (default 10)")
    args = parser.parse_args()
    load_start = loads()
    model = args.model or str(Path(tempfile.mkdtemp()) / "crfsuite.model")
    split = load_split("conll2000", root=args.data_root)
    print(f"python-crfsuite {version('python-crfsuite')}; CoNLL-2000: {split.train.n} "
          f"training / {split.test.n} test sentences, {split.train.n_features} attributes, "
          f"{split.train.n_labels} tags")
    tr, te = make_task(split.train), make_task(split.test)
    te.evaluate(np.zeros(te.d), with_hinge=False)      # compile the evaluation
    solvers = ("bcfw", "fw", "ssg")
    for solver in solvers:
        compile_solver(split.train, solver)
    peer = Crfsuite(split.train)
    print("Test F1 (seconds: CPU of that run's training; the timing is the rounds' below):")
    for solver in solvers:
        for p, seconds, f1 in ssvmbench_rows(tr, te, solver, 5):
            shown = ", ".join(f"{k} {v:.4f}" for k, v in f1.items())
            print(f"ssvmbench {solver:4s} pass {p}: {seconds:7.2f} s CPU  F1 {shown}")
    for algorithm, epochs in (("ap", (1, 2, 3, 5)), ("pa", (1, 2, 3, 5)),
                              ("lbfgs", (10, 25, 50))):
        for e, seconds, f1 in crfsuite_rows(peer, split.test, algorithm, epochs, model):
            print(f"crfsuite  {algorithm:5s} {e:3d} epochs: {seconds:7.2f} s CPU  F1 {f1:.4f}")
    measurements = [ssvmbench_pass(tr, "bcfw", args.passes),
                    peer.measure("ap", args.passes, model),
                    ssvmbench_pass(tr, "ssg", args.passes),
                    peer.measure("pa", args.passes, model),
                    ssvmbench_pass(tr, "fw", args.passes),
                    peer.measure("lbfgs", args.lbfgs_iterations, model)]
    samples = run_rounds(args.rounds, measurements)
    for line in summary(samples, PAIRS, load_start, loads()):
        print(line)


if __name__ == "__main__":
    main()
