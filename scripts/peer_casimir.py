"""CoNLL-2003 NER: the Casimir authors' own code (github.com/krishnap25/casimir, Pillutla et al.,
NeurIPS 2018) beside ssvmbench's SVRG and SC-SVRG, Figure 2a's settings, training objective per
epoch side by side.

Their side: their ``main_ner.py``, run as their ``scripts/named_entity_recognition.sh`` runs it
(the "MAIN EXPT" block: the same options, ``--l2reg 1 --seed 0``, train eng.train, dev
eng.testa, test eng.testb), on their source extracted and built by ``scripts/peer_casimir.sh``
(nothing of theirs is copied here). ``main_ner.py`` calls ``utils.get_ifo`` (their reader and
hashed features, ``NamedEntityRecognitionIfo``) and ``utils.run_algorithm`` ->
``optim.optimize_ifo`` (``SVRGOptimizer``, ``CasimirSVRGOptimizer``), whose
``optimization_algorithms._log`` prints one row per epoch: epoch, train objective (the
non-smooth primal ``1/n sum_i H_i(w) + lambda/2 ||w||^2``, unnormalized Hamming loss,
``lambda = l2reg / n``), dev objective and F1, test objective and F1 (their
``evaluation_function``: token F1 without O, support-weighted), seconds. Those printed rows are
what this script reads, while the run goes on: a run stops after ``--epochs`` epochs, or earlier
once ``--min-epochs`` are done and the next epoch (as long as the last) would end past
``--budget`` seconds.

Our side: ``ssvmbench run`` with the overrides of our preset
(configs/experiment/casimir_figure2a_ner.yaml; checked against it here), ``eval.every=3`` (an
epoch is 3 of our effective passes: a full gradient, then two oracle calls per step), once with
``++oracle.ties=casimir`` (top-K ties broken as their ``viterbi.pyx``) and once with
``++oracle.ties=scan`` (ours, the default); per checkpoint the ``raw`` row of ``load_logs``
(primal, test_tag_f1 on eng.testb).

Checks: their feature map against ours, the same ``w`` on both sides: the final weights of our
SVRG (ties=casimir) run scored by their ``_log`` (train objective, test F1) against our log's
last row; and the data each side reads (n, tokens, tags, buckets).
"""

import argparse
import json
import os
import queue
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PRESET = HERE / "configs" / "experiment" / "casimir_figure2a_ner.yaml"
DATA_FILES = ("eng.train", "eng.testa", "eng.testb")

# Figure 2a's three SVRG-type methods. "theirs": the options their
# scripts/named_entity_recognition.sh gives main_ner.py in its "MAIN EXPT" block (and the
# lines of that block they are read from, checked in check_their_script); "ours": the sweep of
# our preset with the same method (checked in check_preset).
METHODS = {
    "svrg": {
        "title": "SVRG",
        "theirs": ["--algorithm", "svrg", "--lr", "2e-2", "--K", "5", "--smoother", "1"],
        "block": "algorithm=svrg k=5 lr=2e-2 smoother=1",
        "sweep": "casimir_ner_svrg",
        "ours": ["solver=svrg", "solver.lr=0.02", "solver.output=average", "oracle=topk",
                 "oracle.K=5", "oracle.mu=1"]},
    "sc_svrg_adapt": {
        "title": "SC-SVRG-adapt",
        "theirs": ["--algorithm", "csvrg_lr", "--lr", "2e-2", "--K", "5", "--smoother", "2",
                   "--warm_start", "2", "--decay_smoother", "expo"],
        "block": "algorithm=csvrg_lr k=5 lr=2e-2 warm_start=2 decay_smoother=expo smoother=2",
        "sweep": "casimir_ner_sc_svrg_adapt",
        "ours": ["solver=sc_svrg", "solver.lr=0.02", "solver.decay_rule=expo",
                 "solver.warm_start=extrapolation", "solver.output=average", "oracle=topk",
                 "oracle.K=5", "oracle.mu=2"]},
    "sc_svrg_const": {
        "title": "SC-SVRG-const",
        # --decay_smoother not given: utils.make_parser's default 'const' (constant mu)
        "theirs": ["--algorithm", "csvrg", "--L", "32", "--K", "5", "--smoother", "1",
                   "--warm_start", "3"],
        "block": "algorithm=csvrg k=5 L=32 warm_start=3 smoother=1",
        "sweep": "casimir_ner_sc_svrg_const",
        "ours": ["solver=sc_svrg", "solver.scheme=const", "solver.L=32",
                 "solver.warm_start=prev_iterate", "solver.output=average", "oracle=topk",
                 "oracle.K=5", "oracle.mu=1"]},
}
TIES = ("casimir", "scan")
# per-run settings, filled in per run (not compared with the preset)
# keys this script sets per run (the tie order: both, ++oracle.ties=casimir and =scan)
RUN_KEYS = ("seed", "lambda", "solver.passes", "eval.every", "data", "loss", "+oracle.ties")


def say(*parts):
    print(time.strftime("%H:%M:%S"), *parts, flush=True)


# ---------------------------------------------------------------------------------------------
# settings checks

def check_preset(notes):
    """Each method's overrides against the matching sweep of our preset (RUN_KEYS aside)."""
    import yaml
    sweeps = yaml.safe_load(PRESET.read_text())["sweeps"]
    for m in METHODS.values():
        preset = {t for t in sweeps[m["sweep"]].split() if t.split("=")[0] not in RUN_KEYS}
        if preset != set(m["ours"]):
            notes.append(f"NOTE: {m['title']}: our overrides {sorted(m['ours'])} differ from "
                         f"{PRESET.name} sweep {m['sweep']}: {sorted(preset)}")
        data = [t for t in sweeps[m["sweep"]].split() if t.split("=")[0] in ("data", "loss")]
        if sorted(data) != ["data=conll2003_casimir", "loss=hamming"]:
            notes.append(f"NOTE: {m['sweep']} has {data}, this script uses "
                         "data=conll2003_casimir loss=hamming")


def check_their_script(src, notes):
    """Each method's settings as assignments of their scripts/named_entity_recognition.sh, in
    its first ("MAIN EXPT") block, the block that runs Figure 2a."""
    text = (src / "scripts" / "named_entity_recognition.sh").read_text()
    main = text.split("MAIN EXPT: NON-SMOOTH")[0]
    for m in METHODS.values():
        algorithm = m["block"].split()[0]
        start = main.find(algorithm + "\n")
        end = main.find("done", start)
        found = set(main[start:end].split()) if start >= 0 else set()
        missing = [a for a in m["block"].split() if a not in found]
        if missing:
            notes.append(f"NOTE: their named_entity_recognition.sh main block for "
                         f"{algorithm}: {missing} not found")
    if "--l2reg $l2reg --seed $seed" not in main or "for l2reg in 1 0.1 0.01" not in main:
        notes.append("NOTE: their main block no longer loops l2reg over 1 0.1 0.01")


# ---------------------------------------------------------------------------------------------
# their side

ROW = re.compile(r"^\d+\.\d\d\t")


def their_run(key, args, data_prefix, out_dir, log):
    """Their main_ner.py for method ``key``; returns (command, rows, stopped early, stderr
    tail), rows = [epoch, train objective, dev objective, dev F1, test objective, test F1,
    seconds]."""
    m = METHODS[key]
    out_dir.mkdir(parents=True, exist_ok=True)
    cmd = ([sys.executable, "-u", "main_ner.py", "--num_passes", str(args.epochs)] + m["theirs"]
           + ["--l2reg", f"{args.l2reg:g}", "--seed", str(args.seed),
              "--prefix", str(data_prefix), "--train-file", "conll03_ner/eng.train",
              "--dev-file", "conll03_ner/eng.testa", "--test-file", "conll03_ner/eng.testb",
              "--output-dir", str(out_dir) + "/"])
    env = dict(os.environ, PYTHONPATH=str(args.casimir_src))
    err_path = out_dir / "stderr.txt"
    rows, early, start = [], False, time.time()
    with open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, cwd=args.casimir_src, env=env, stdout=subprocess.PIPE,
                                stderr=err, text=True)
        last = None
        for line in proc.stdout:
            if not ROW.match(line):
                continue
            row = [float(x) for x in line.split()]
            rows.append(row)
            now = time.time() - start
            log(f"authors {m['title']:13s} epoch {int(row[0]):2d}: primal {row[1]:.6f}  "
                f"test F1 {row[5]:.4f}  dev F1 {row[3]:.4f}  ({row[-1]:.0f} s, {now:.0f} s "
                "in all)")
            epoch = int(row[0])
            if (last is not None and args.min_epochs <= epoch < args.epochs
                    and now + (now - last) > args.budget):
                early = True
                proc.terminate()
                break
            last = now
        proc.wait()
    tail = "".join(line for line in err_path.read_text().splitlines(True)
                   if "Warning" not in line and "_warn_prf" not in line)[-2000:]
    shown = [Path(cmd[0]).name] + cmd[1:]
    return shlex.join(shown), rows, early, (tail if proc.returncode not in (0, -15) else "")


# ---------------------------------------------------------------------------------------------
# our side

def our_run(key, ties, args, run_dir):
    """``ssvmbench run`` of method ``key`` with ``oracle.ties=ties`` (None: not set);
    returns (command, checkpoints [(epoch, primal, test F1)], refused message)."""
    m = METHODS[key]
    # ++: oracle.ties is not in configs/oracle/topk.yaml (scan, its default, is the solver's),
    # so it is added; ++ also overrides it should the config come to have it
    overrides = (m["ours"] + ([f"++oracle.ties={ties}"] if ties else [])
                 + [f"seed={args.seed}", "data=conll2003_casimir", "loss=hamming",
                    f"lambda={args.l2reg:g}/n", f"solver.passes={3 * args.ours_epochs}",
                    "eval.every=3", f"hydra.run.dir={run_dir}"])
    cmd = [str(Path(sys.executable).parent / "ssvmbench"), "run"] + overrides
    done = subprocess.run(cmd, check=False, capture_output=True, text=True)
    shown = shlex.join(["ssvmbench", "run"] + overrides[:-1] + ["hydra.run.dir=<tmp>"])
    if done.returncode != 0:
        return shown, [], (done.stdout + done.stderr).strip()[-1500:]
    from ssvmbench.runlog import load_logs
    df = load_logs(run_dir)
    df = df[df["iterate"] == "raw"]
    return shown, [(p / 3, pr, f1) for p, pr, f1 in
                   zip(df["effective_pass"], df["primal"], df["test_tag_f1"])], None


def ours_all(args, work, log):
    """Both tie orders of every method (falling back to no ``oracle.ties`` if it is refused);
    then the feature-map check on the SVRG ties=casimir (or fallback) weights."""
    results = {}
    for key in args.methods:
        for ties in TIES:
            start = time.time()
            run_dir = work / f"ours-{key}-{ties}"
            cmd, rows, refused = our_run(key, ties, args, run_dir)
            if refused and "oracle.ties" in refused:
                log(f"ours    {METHODS[key]['title']:13s} oracle.ties={ties} refused; the run "
                    "without oracle.ties in its place")
                fallback = next((r for (k, _), r in results.items()
                                 if k == key and r["refused"]), None)
                if fallback is None:
                    run_dir = work / f"ours-{key}-default"
                    cmd2, rows, refused2 = our_run(key, None, args, run_dir)
                    fallback = {"cmd": cmd2, "rows": rows, "error": refused2,
                                "refused": refused, "run": run_dir,
                                "seconds": time.time() - start}
                results[key, ties] = fallback
                continue
            results[key, ties] = {"cmd": cmd, "rows": rows, "error": refused, "refused": None,
                                  "run": run_dir, "seconds": time.time() - start}
            last = rows[-1] if rows else None
            log(f"ours    {METHODS[key]['title']:13s} ties={ties:7s}: {len(rows)} epochs in "
                f"{time.time() - start:.0f} s (incl. startup)"
                + (f", last primal {last[1]:.6f}" if last else f"; FAILED: {refused}"))
    return results


# ---------------------------------------------------------------------------------------------
# the same w on both sides

def cross_check_worker(args):
    """Run in a subprocess (their package on sys.path): their oracles built by their
    utils.get_ifo, no smoothing (the logged objective is non-smooth anyway), their _log at the
    weights in ``args.weights``, and per sentence their ``function_value`` (the structural
    hinge) and test decodings (their ``_predict``) against ours; prints one JSON line."""
    sys.path.insert(0, str(args.casimir_src))
    import numpy as np
    from casimir import optim
    from casimir.data.named_entity_recognition import (
        incremental_first_order_oracle as ner_ifo,
    )
    from casimir.optim.optimization_algorithms import _log
    from casimir.structured_prediction_experiment import utils

    from ssvmbench.data import load_split
    from ssvmbench.tasks import make_task
    argv = ["--prefix", str(args.data_prefix), "--train-file", "conll03_ner/eng.train",
            "--dev-file", "conll03_ner/eng.testa", "--test-file", "conll03_ner/eng.testb"]
    their = utils.make_parser("ner").parse_args(argv)
    train, _dev, test = utils.get_ifo(their, "ner")
    ds = train.ner_dataset
    out = {"n": len(train), "tokens": int(sum(len(s) for s in ds.words)),
           "test_n": len(test), "test_tokens": int(sum(len(s) for s in test.ner_dataset.words)),
           "tags": [t for t, _ in sorted(train.ner_to_idx.items(), key=lambda kv: kv[1])
                    if t not in ("START", "STOP")],
           "vocabulary": int(max(max(s) for s in ds.words if s))}
    w = np.load(args.weights)["raw"]
    out["d"] = len(w)
    rows = []
    _log(rows, 0, w, [optim.L2Penalty(args.l2reg / len(train))], train, None, test, False,
         time.time())
    out["primal"], out["test_objective"], out["test_f1"] = rows[0][1], rows[0][2], rows[0][3]
    # per sentence: their hinge, ours (our task on that sentence alone)
    split = load_split("conll2003_casimir", root=args.data_root)
    theirs = np.array([train.function_value(w, i) for i in range(len(train))])
    ours = np.array([make_task(split.train.subset([i]), loss="hamming").evaluate(w, True)[0]
                     for i in range(split.train.n)])
    differ = np.flatnonzero(np.abs(ours - theirs) > 1e-8 * np.maximum(1, np.abs(theirs)))
    idx_to_word = {i: word for word, i in train_words(args).items()}
    out["hinge_differ"] = [
        {"i": int(i), "words": " ".join(idx_to_word.get(x, "?") for x in ds.words[i]),
         "word_ids": list(map(int, ds.words[i])), "theirs": theirs[i], "ours": ours[i]}
        for i in differ[:5]]
    out["n_hinge_differ"] = len(differ)
    out["hinge_max_other"] = float(np.delete(np.abs(ours - theirs), differ).max())
    predicted = np.concatenate(ner_ifo._predict(w, test.ner_dataset, test.num_ner_tags))
    mine = make_task(split.test, loss="hamming").evaluate(w, False)[2]
    out["test_decodings_differ"] = int(np.sum(predicted != mine))
    print("CROSSCHECK " + json.dumps(out), flush=True)


def train_words(args):
    """Their word ids (reader.generate_counts_and_feature_map on eng.train, threshold 2, as
    create_ner_ifo_from_data calls it)."""
    import codecs

    from casimir.data.named_entity_recognition import reader
    path = Path(args.data_prefix) / "conll03_ner" / "eng.train"
    with codecs.open(str(path), "r", "utf-8") as f:
        return reader.generate_counts_and_feature_map(f.readlines(), threshold=2)[0]


def cross_check(args, weights):
    cmd = [sys.executable, __file__, "--cross-check", "--weights", str(weights),
           "--casimir-src", str(args.casimir_src), "--data-prefix", str(args.data_prefix),
           "--l2reg", str(args.l2reg), "--data-root", args.data_root]
    done = subprocess.run(cmd, check=False, capture_output=True, text=True)
    for line in done.stdout.splitlines():
        if line.startswith("CROSSCHECK "):
            return json.loads(line[len("CROSSCHECK "):]), None
    return None, (done.stdout + done.stderr)[-1500:]


# ---------------------------------------------------------------------------------------------

def rel(ours, theirs):
    return f"{ours:9.4f} ({100 * (ours - theirs) / theirs:+6.1f}%)"


def table(key, theirs, ours, out):
    """One method's side-by-side rows by epoch."""
    t_rows = {int(r[0]): r for r in theirs["rows"]}
    o_rows = {t: {round(e): (p, f) for e, p, f in ours[key, t]["rows"]} for t in TIES}
    labels = [("ours ties=" + t) if not ours[key, t]["refused"] else "ours (no ties option)"
              for t in TIES]
    out(f"  {'epoch':>5} | {'authors primal':>14} | {labels[0]:>21} | {labels[1]:>21} | "
        f"{'authors test F1':>15} | {'ours F1 ' + TIES[0]:>15} | {'ours F1 ' + TIES[1]:>12} "
        f"| authors s")
    epochs = sorted(set(t_rows) | {e for t in TIES for e in o_rows[t]})
    for e in epochs:
        tr = t_rows.get(e)
        cells, f1s = [], []
        for t in TIES:
            o = o_rows[t].get(e)
            if o is None:
                cells.append(f"{'-':>21}")
                f1s.append("-")
            else:
                cells.append(f"{rel(o[0], tr[1]) if tr else f'{o[0]:9.4f}':>21}")
                f1s.append(f"{o[1]:.4f}")
        out(f"  {e:5d} | {f'{tr[1]:.6f}' if tr else '-':>14} | {cells[0]} | {cells[1]} | "
            f"{f'{tr[5]:.4f}' if tr else '-':>15} | {f1s[0]:>15} | {f1s[1]:>12} | "
            f"{f'{tr[6]:.0f}' if tr else '-':>9}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--casimir-src", type=Path, required=True,
                        help="their source tree, built (scripts/peer_casimir.sh does it)")
    parser.add_argument("--casimir-rev", default="?", help="their commit, for the output")
    parser.add_argument("--data-root", required=True, help="the folder with conll2003/")
    parser.add_argument("--methods", default="svrg,sc_svrg_adapt,sc_svrg_const",
                        help="comma-separated, of " + ", ".join(METHODS))
    parser.add_argument("--epochs", type=int, default=10, help="their epochs at most")
    parser.add_argument("--min-epochs", type=int, default=5,
                        help="their epochs at least, whatever the budget")
    parser.add_argument("--budget", type=float, default=480,
                        help="seconds per method of theirs (no epoch started that would end "
                             "past it, once --min-epochs are done)")
    parser.add_argument("--ours-epochs", type=int, default=10,
                        help="our epochs (solver.passes = 3 x this)")
    parser.add_argument("--l2reg", type=float, default=1.0, help="lambda = l2reg / n")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time (their runs and "
                        "ours are single-threaded)")
    parser.add_argument("--cross-check", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--weights", help=argparse.SUPPRESS)
    parser.add_argument("--data-prefix", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cross_check:
        return cross_check_worker(args)
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in args.methods if m not in METHODS]
    if unknown:
        parser.error(f"unknown methods {unknown}; choose from {list(METHODS)}")

    notes = []
    check_preset(notes)
    check_their_script(args.casimir_src, notes)
    work = Path(tempfile.mkdtemp(prefix="peer_casimir."))
    try:
        run(args, work, notes)
    finally:
        import shutil
        shutil.rmtree(work, ignore_errors=True)


def run(args, work, notes):
    # their layout: --prefix P --train-file conll03_ner/eng.train (named_entity_recognition.sh)
    args.data_prefix = work / "data"
    (args.data_prefix / "conll03_ner").mkdir(parents=True)
    for name in DATA_FILES:
        source = Path(args.data_root) / "conll2003" / name
        if not source.is_file():
            sys.exit(f"peer_casimir.py: {source} not found")
        (args.data_prefix / "conll03_ner" / name).symlink_to(source)
    import Cython
    import numpy
    import sklearn
    say(f"krishnap25/casimir {args.casimir_rev} built with Cython {Cython.__version__}, numpy "
        f"{numpy.__version__}, scikit-learn {sklearn.__version__}, Python "
        f"{sys.version.split()[0]}; methods {', '.join(args.methods)}; theirs {args.min_epochs}"
        f"-{args.epochs} epochs within {args.budget:.0f} s each, ours {args.ours_epochs} epochs; "
        f"l2reg {args.l2reg:g} (lambda = l2reg / n), seed {args.seed}, {args.jobs} job(s)")

    lock = threading.Lock()

    def log(message):
        with lock:
            say(message)

    theirs, ours, check = {}, {}, {}
    jobs = queue.Queue()
    order = list(args.methods)
    # the longest first: their first method, ours (all of it, then the check), their others
    jobs.put(("theirs", order[0]))
    jobs.put(("ours", None))
    for key in order[1:]:
        jobs.put(("theirs", key))

    def worker():
        while True:
            try:
                kind, key = jobs.get_nowait()
            except queue.Empty:
                return
            if kind == "theirs":
                start = time.time()
                cmd, rows, early, err = their_run(key, args, args.data_prefix,
                                                  work / f"theirs-{key}", log)
                theirs[key] = {"cmd": cmd, "rows": rows, "early": early, "error": err,
                               "seconds": time.time() - start}
            else:
                ours.update(ours_all(args, work, log))
                svrg = ours.get(("svrg", "casimir")) or next(iter(ours.values()))
                weights = Path(svrg["run"]) / "weights.npz"
                if weights.is_file():
                    log("cross-check: their _log and per-sentence hinge at our final weights")
                    check["result"], check["error"] = cross_check(args, weights)
                    check["run"] = svrg

    threads = [threading.Thread(target=worker) for _ in range(max(1, args.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report(args, theirs, ours, check, notes)


def report(args, theirs, ours, check, notes):
    out = print
    out("")
    out("=" * 100)
    out(f"Authors' numbers: krishnap25/casimir {args.casimir_rev}, main_ner.py -> "
        "structured_prediction_experiment/utils.py run_algorithm -> "
        "optim/optimization_algorithms.py optimize_ifo (SVRGOptimizer / CasimirSVRGOptimizer); "
        "per-epoch rows printed by optimization_algorithms.py _log: train objective = "
        "NamedEntityRecognitionIfo.batch_function_value (non-smooth element) + L2Penalty, "
        "test F1 = NamedEntityRecognitionIfo.evaluation_function on eng.testb. Settings: their "
        "scripts/named_entity_recognition.sh, MAIN EXPT block.")
    out("Ours: ssvmbench run (preset configs/experiment/casimir_figure2a_ner.yaml), primal and "
        "test_tag_f1 of the raw rows of load_logs, epoch = effective passes / 3. Relative "
        "differences: (ours - authors') / authors'.")
    for key in args.methods:
        m, t = METHODS[key], theirs.get(key)
        out("")
        out(f"== {m['title']}")
        if t is None:
            out("  authors: not run")
            continue
        out(f"  authors: {t['cmd']}")
        out(f"           {len(t['rows']) - 1 if t['rows'] else 0} epochs in {t['seconds']:.0f} s"
            + (" (stopped: the next epoch would pass the budget)" if t["early"] else ""))
        if t["error"]:
            out(f"  authors' run FAILED:\n{t['error']}")
        for ties in TIES:
            o = ours.get((key, ties))
            if o is None:
                continue
            out(f"  ours:    {o['cmd']}  ({o['seconds']:.0f} s)")
            if o["refused"]:
                out(f"           oracle.ties={ties} refused ({o['refused'].splitlines()[0]}); "
                    "the column shows the run without oracle.ties")
            if o["error"]:
                out(f"  our run FAILED:\n{o['error']}")
        if all((key, ti) in ours for ti in TIES):
            table(key, t, ours, out)
        t1 = {int(r[0]): r for r in t["rows"]}.get(1)
        if t1:
            ours1 = [f"ties={ti} {f:.4f}" for ti in TIES for e, _, f in ours.get((key, ti),
                     {"rows": []})["rows"] if round(e) == 1]
            out(f"  F1 at epoch 1: authors test (eng.testb) {t1[5]:.4f}, dev (eng.testa) "
                f"{t1[3]:.4f}; ours test (eng.testb) {', '.join(ours1) or '-'}")
    out("")
    out("Same data and features on both sides:")
    result = check.get("result")
    if result:
        from ssvmbench.data import load_split
        split = load_split("conll2003_casimir", root=args.data_root)
        tr, te = split.train, split.test
        run = check["run"]
        last = run["rows"][-1]
        out(f"  n: theirs {result['n']}, ours {tr.n}; training tokens: theirs "
            f"{result['tokens']}, ours {tr.n_tokens}; test (eng.testb) sentences {result['test_n']}"
            f" / {te.n}, tokens {result['test_tokens']} / {te.n_tokens}")
        out(f"  tags: theirs {result['tags']}, ours {list(tr.label_names)}")
        out(f"  weights: theirs {result['d']} (main_ner.py: dim = 2**16 - 1), ours "
            f"{tr.n_features} buckets; their vocabulary: word ids 0..{result['vocabulary']}")
        out(f"  our final w ({run['cmd'].rsplit(' ', 1)[0]}), epoch {last[0]:.0f}: "
            f"train objective by their _log {result['primal']:.8f}, by our log {last[1]:.8f} "
            f"(rel. diff {(last[1] - result['primal']) / result['primal']:+.2e}); test F1 by "
            f"their evaluation_function {result['test_f1']:.6f}, by ours {last[2]:.6f}; test "
            f"decodings (their _predict, our evaluate) differ on "
            f"{result['test_decodings_differ']} of {te.n_tokens} tokens")
        out(f"  per training sentence, structural hinge at that w (their "
            f"NamedEntityRecognitionIfo.function_value, our task on the sentence alone): "
            f"{result['n_hinge_differ']} of {result['n']} differ (the others agree to "
            f"{result['hinge_max_other']:.1e})")
        for d in result["hinge_differ"]:
            out(f"    sentence {d['i']}: theirs {d['theirs']:.6f}, ours {d['ours']:.6f}; "
                f"'{d['words']}', their word ids {d['word_ids']}")
            if any(x < 0 for x in d["word_ids"]):
                out("      (a word id < 0: their reader.generate_counts_and_feature_map sets "
                    "word_to_idx['START'] = -1 and ['STOP'] = -2, the ids their features.pyx "
                    "pads sentences with, so the words START and STOP, if seen in eng.train "
                    "fewer than 3 times, keep those ids instead of the unknown word's 0, which "
                    "ours gives them)")
    else:
        out(f"  cross-check not done: {check.get('error', 'no weights of ours')}")
    for note in notes:
        out(note)


if __name__ == "__main__":
    main()
