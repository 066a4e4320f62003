"""OCR: the BCFW authors' MATLAB code (github.com/ppletscher/BCFWstruct, Lacoste-Julien et al.,
ICML 2013) under GNU Octave beside ssvmbench's BCFW, SSG and FW, BCFW Figure 1a-c's lambdas
(configs/experiment/bcfw_figure1abc_ocr.yaml): primal, dual and duality gap per pass side by
side, and the seconds per pass.

Their side: their ``solverBCFW``, ``solverSSG`` and ``solverFW`` with their chain model
(``demo/chain``: ``chain_featuremap``, ``chain_oracle``, ``chain_loss``), unmodified, on the
OCR data their ``loadOCRData.m`` reads from ``ocr.mat``, written here from our loader
(``ssvmbench.data.ocr``): the same 6,251 training words (folds 1-9, their ``'ocr2'``) in the
same order, the same 128 pixels plus the constant 1 per letter (their ``constructExampleOCR``
adds it), so d = 26 x 129 + 2 x 26 + 26^2 = 4082 on both sides; their letters' pixels are in
column-major order of the 16 x 8 image, ours row-major (a permutation of the coordinates of
w, which changes no objective). Their objective is ours: ``lambda/2 ||w||^2 + 1/n sum_i
H_i(w)``, ``options.lambda`` our ``lambda``, the normalized Hamming loss (``chain_loss``).
Options: ``debug = 1`` (they log primal, dual and gap after every pass: their weighted
average ``wAvg`` for BCFW and SSG, ``do_weighted_averaging = 1`` their default; FW's iterate),
``gap_check = 0`` and ``gap_threshold = -Inf`` (no early stop), ``rand_seed`` the seed.

Two shims on the Octave path, ahead of theirs, and none of their files changed:
``randi.m`` hands out the indices of a file in turn (the same-order runs: the order their
own ``randi(n)`` draws after their ``rand('state', rand_seed)``, drawn by this script
beforehand with the built-in ``randi`` and replayed to both sides, ours by
``+solver.order=FILE``); ``average_loss.m`` returns NaN (their ``debug`` logging computes the
training error with one more decoding pass, which nothing here reads).

Our side: ``ssvmbench run solver=bcfw|ssg|fw data=ocr lambda=...`` (the ``wavg`` iterate
against their BCFW and SSG, ``raw`` against their FW). Seconds per pass: theirs from runs
with ``debug = 0`` (the solver call timed by tic/toc, over ``--time-passes`` passes), ours the
``time_s`` of our log (the solver's time, checkpoints excluded).
"""

import argparse
import json
import os
import platform
import queue
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))       # this checkout's ssvmbench, here and in our runs
SOLVERS = {"bcfw": "solverBCFW", "ssg": "solverSSG", "fw": "solverFW"}
OURS_ITERATE = {"bcfw": "wavg", "ssg": "wavg", "fw": "raw"}
LAMBDAS = ("0.01", "0.001", "1/n")
N_TRAIN = 6251

RANDI_SHIM = """function ri = randi(imax, varargin)
% peer_bcfwstruct.py: the next index of the file $BCFW_ORDER (one index from 1 a line),
% in place of Octave's randi for their solvers' randi(n)
persistent order pos
if isempty(order)
  order = load(getenv('BCFW_ORDER')); pos = 0;
end
if nargin > 1 || pos >= numel(order) || order(pos + 1) > imax
  error('peer randi shim: only randi(n), within the %d indices of the order', numel(order));
end
pos = pos + 1;
ri = order(pos);
end
"""

AVERAGE_LOSS_SHIM = """function avg_loss = average_loss(param, maxOracle, model)
% peer_bcfwstruct.py: their debug logging's training error, not read here (saves a pass)
avg_loss = NaN;
end
"""

DRIVER = r"""
args = argv();
src = args{1}; datadir = args{2}; solver = args{3}; lambda_ = str2double(args{4});
passes = str2double(args{5}); seed = str2double(args{6}); debug_ = str2double(args{7});
out = args{8}; shims = args(9:end);
addpath(genpath(fullfile(src, 'solvers')));
addpath(fullfile(src, 'demo', 'chain')); addpath(fullfile(src, 'demo', 'chain', 'helpers'));
for s = 1:numel(shims)
  addpath(shims{s});   % ahead of theirs
end
[patterns, labels] = loadOCRData('ocr2', datadir);
param = struct('patterns', {patterns}, 'labels', {labels}, 'lossFn', @chain_loss, ...
               'oracleFn', @chain_oracle, 'featureFn', @chain_featuremap);
n = numel(patterns);
if strcmp(solver, 'order')   % their order: what randi(n) draws after rand('state', seed)
  rand('state', seed); randn('state', seed);
  o = zeros(passes * n, 1);
  for t = 1:numel(o)
    o(t) = randi(n);
  end
  f = fopen(out, 'w'); fprintf(f, '%d\n', o); fclose(f);
  exit(0);
end
d = length(chain_featuremap(param, patterns{1}, labels{1}));
options = struct('lambda', lambda_, 'num_passes', passes, 'debug', debug_, 'gap_check', 0, ...
                 'gap_threshold', -Inf, 'rand_seed', seed);
t0 = tic();
[model, progress] = feval(solver, param, options);
elapsed = toc(t0);
f = fopen(out, 'w');
fprintf(f, '{"n": %d, "d": %d, "seconds": %.6f, "version": "%s",\n', n, d, elapsed, version());
fprintf(f, ' "primal": [%s],\n', strjoin(arrayfun(@(x) sprintf('%.17g', x), progress.primal', 'UniformOutput', false), ', '));
if isfield(progress, 'dual')
  fprintf(f, ' "dual": [%s],\n', strjoin(arrayfun(@(x) sprintf('%.17g', x), progress.dual', 'UniformOutput', false), ', '));
end
fprintf(f, ' "eff_pass": [%s]}\n', strjoin(arrayfun(@(x) sprintf('%.17g', x), progress.eff_pass', 'UniformOutput', false), ', '));
fclose(f);
"""


def say(*parts):
    print(*parts, flush=True)


def lam_value(text, n=N_TRAIN):
    return 1.0 / n if text == "1/n" else float(text)


def write_ocr_mat(path, data_root):
    """``ocr.mat`` as their ``convertOCR`` writes it (a cell of structs: ``fold``,
    ``pixels`` a cell of 16 x 8 images, ``word`` the labels from 0, a row), from our loader:
    our training words first (fold 1: their ``'ocr2'`` trains on every fold but 0), then our
    test words (fold 0). Returns (n_train, n_test)."""
    import scipy.io

    from ssvmbench.data import ocr
    split = ocr.load(root=data_root)

    def words(part, fold):
        out = []
        for i in range(part.n):
            a, b = part.offsets[i], part.offsets[i + 1]
            images = np.empty(b - a, dtype=object)
            for t in range(a, b):
                ids = part.feat_idx[part.feat_ptr[t]:part.feat_ptr[t + 1]]
                vals = part.feat_val[part.feat_ptr[t]:part.feat_ptr[t + 1]]
                if ids[-1] != ocr.N_PIXELS or vals[-1] != 1.0 or np.any(vals != 1.0):
                    raise SystemExit(f"letter {t}: not 0/1 pixels and the constant 1")
                image = np.zeros(ocr.N_PIXELS)
                image[ids[:-1]] = 1.0
                images[t - a] = image.reshape(16, 8)     # our pixel r*8+c: image (r, c)
            out.append({"fold": float(fold), "pixels": images,
                        "word": part.labels[a:b].astype(float)})
        return out

    dataset = words(split.train, 1) + words(split.test, 0)
    cell = np.empty((len(dataset), 1), dtype=object)
    cell[:, 0] = dataset
    scipy.io.savemat(path, {"dataset": cell})
    return split.train.n, split.test.n


def octave(work, args, solver, lam, passes, seed, debug, out, shims, order=None):
    cmd = ["octave", "--no-gui", "--no-window-system", "-q", "-W", str(work / "driver.m"),
           str(args.src), str(work / "data") + "/", solver, repr(lam_value(lam)), str(passes),
           str(seed), str(debug), str(out)] + [str(s) for s in shims]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    if order is not None:
        env["BCFW_ORDER"] = str(order)
    start = time.perf_counter()
    # (in the work folder: an Octave that is killed leaves its octave-workspace there)
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False, cwd=work)
    if done.returncode != 0:
        raise RuntimeError(f"octave {solver} lambda={lam}: {(done.stdout + done.stderr)[-2000:]}")
    return time.perf_counter() - start


def their_order(work, args, seed, passes):
    """Their order for ``seed``: (1-based file for the shim, 0-based file for ours)."""
    one = work / f"order_seed{seed}_p{passes}.txt"
    if not one.exists():
        octave(work, args, "order", "0.01", passes, seed, 0, one, [])
    zero = one.with_suffix(".zero.txt")
    np.savetxt(zero, np.loadtxt(one, dtype=np.int64) - 1, fmt="%d")
    return one, zero


def theirs(work, args, key, lam, passes, seed, same_order, debug=1):
    """One run of their solver; returns its JSON (primal, dual, eff_pass, seconds, d)."""
    kind = "same" if same_order else "own"
    tag = f"theirs_{key}_{lam.replace('/', '')}_s{seed}_p{passes}_{kind}_d{debug}"
    out = work / f"{tag}.json"
    if out.exists():                          # kept from an earlier call with this --work
        result = json.loads(out.read_text())
        result["wall"] = 0.0
        return result
    shims, one = [work / "shim_quiet"], None
    if same_order and key != "fw":
        one, _ = their_order(work, args, seed, passes)   # drawn before the runs start
        shims.append(work / "shim_order")
    partial = out.with_suffix(".part")
    wall = octave(work, args, SOLVERS[key], lam, passes, seed, debug, partial, shims, one)
    partial.rename(out)
    result = json.loads(out.read_text())
    result["wall"] = wall
    return result


def ours(work, args, key, lam, passes, seed, order=None):
    """``ssvmbench run`` of ``key``; returns (command, rows {pass: (primal, dual, gap)},
    seconds per pass)."""
    kind = "same" if order else "own"
    run_dir = work / f"ours_{key}_{lam.replace('/', '')}_s{seed}_p{passes}_{kind}"
    if key == "fw":
        run_dir = work / f"ours_fw_{lam.replace('/', '')}_p{passes}"
    overrides = [f"solver={key}", "data=ocr", f"lambda={lam}", f"seed={seed}",
                 f"solver.passes={passes}",
                 "solver.iterates=[raw]" if key == "fw" else "solver.iterates=[raw,wavg]"]
    if order is not None:
        overrides.append(f"+solver.order={order}")
    if args.data_root:
        overrides.append(f"data.root={args.data_root}")
    cmd = [sys.executable, "-m", "ssvmbench", "run"] + overrides + [f"hydra.run.dir={run_dir}"]
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(HERE)] + [p for p in [
                   os.environ.get("PYTHONPATH")] if p]))
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"ours {key} {lam}: {(done.stdout + done.stderr)[-2000:]}")
    from ssvmbench.runlog import load_logs
    df = load_logs(run_dir)
    df = df[df["iterate"] == OURS_ITERATE[key]]
    rows = {int(round(p)): (pr, du, g) for p, pr, du, g in
            zip(df["effective_pass"], df["primal"], df["dual"], df["gap"]) if p >= 1}
    last = df[df["effective_pass"] == df["effective_pass"].max()]
    shown = shlex.join(["ssvmbench", "run"] + overrides)
    return shown, rows, float(last["time_s"].iloc[0]) / passes


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


def compare(theirs_run, ours_rows, key):
    """Max relative difference per quantity over the passes: {primal, dual, gap}."""
    primal = theirs_run["primal"]
    dual = theirs_run.get("dual")
    out = {"primal": 0.0, "dual": np.nan, "gap": np.nan, "passes": len(primal)}
    if dual is not None:
        out["dual"] = out["gap"] = 0.0
    for p, tp in enumerate(primal, start=1):
        op, od, og = ours_rows[p]
        out["primal"] = max(out["primal"], rel(op, tp))
        if dual is not None:
            td = dual[p - 1]
            out["dual"] = max(out["dual"], rel(od, td))
            out["gap"] = max(out["gap"], rel(og, tp - td))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", type=Path, required=True, help="their source tree, extracted")
    ap.add_argument("--rev", default="?", help="their commit, as shown in the report")
    ap.add_argument("--data-root", default=None, help="our data root (data.root)")
    ap.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=list(SOLVERS))
    ap.add_argument("--lambdas", nargs="+", default=list(LAMBDAS))
    ap.add_argument("--passes", type=int, default=2, help="passes of the same-order runs")
    ap.add_argument("--seed", type=int, default=1, help="their rand_seed of the same-order runs")
    ap.add_argument("--seeds", type=int, default=0,
                    help="seed spread: this many seeds each side, own orders (0: none)")
    ap.add_argument("--seed-passes", type=int, default=2)
    ap.add_argument("--seed-lambdas", nargs="+", default=None,
                    help="the lambdas of the seed spread (default: --lambdas)")
    ap.add_argument("--time-passes", type=int, default=1,
                    help="passes of their debug = 0 runs that time them (0: none)")
    ap.add_argument("--check-shim", action="store_true",
                    help="also run their BCFW at the first lambda without the randi shim: "
                         "the same numbers as with it, bit for bit")
    ap.add_argument("--jobs", type=int, default=2, help="Octave runs at a time")
    ap.add_argument("--work", type=Path, default=None, help="keep the runs here")
    ap.add_argument("--out", type=Path, default=None, help="also write the report here")
    args = ap.parse_args()
    args.seed_lambdas = args.seed_lambdas or args.lambdas
    work = (args.work or Path(tempfile.mkdtemp(prefix="peer_bcfwstruct_"))).resolve()
    args.src = args.src.resolve()
    work.mkdir(parents=True, exist_ok=True)
    (work / "data").mkdir(exist_ok=True)
    for name, text in (("shim_order/randi.m", RANDI_SHIM),
                       ("shim_quiet/average_loss.m", AVERAGE_LOSS_SHIM),
                       ("driver.m", DRIVER)):
        (work / name).parent.mkdir(exist_ok=True)
        (work / name).write_text(text)
    n_train, n_test = write_ocr_mat(work / "data" / "ocr.mat", args.data_root)
    say(f"ocr.mat: {n_train} training words (our folds 1-9), {n_test} test (fold 0)")
    if n_train != N_TRAIN:
        raise SystemExit(f"{n_train} training words, expected {N_TRAIN}")

    lock = threading.Lock()
    results = {}
    tasks = queue.Queue()
    for key in args.solvers:
        for lam in args.lambdas:
            tasks.put(("same", key, lam, args.seed))
    if args.check_shim:
        tasks.put(("noshim", "bcfw", args.lambdas[0], args.seed))
    for seed in range(1, args.seeds + 1):
        for key in args.solvers:
            if key == "fw":
                continue
            for lam in args.seed_lambdas:
                tasks.put(("own", key, lam, seed))
    if args.time_passes:      # last: by then ours are done, only Octave runs beside them
        for key in args.solvers:
            tasks.put(("time", key, args.lambdas[0], args.seed))
    errors = []
    if set(args.solvers) - {"fw"}:
        their_order(work, args, args.seed, args.passes)

    def worker():
        while True:
            try:
                kind, key, lam, seed = tasks.get_nowait()
            except queue.Empty:
                return
            try:
                if kind == "same":
                    r = theirs(work, args, key, lam, args.passes, seed, True)
                elif kind == "noshim":
                    r = theirs(work, args, key, lam, args.passes, seed, False)
                elif kind == "time":
                    r = theirs(work, args, key, lam, args.time_passes, seed, False, debug=0)
                else:
                    r = theirs(work, args, key, lam, args.seed_passes, seed, False)
                with lock:
                    results[(kind, key, lam, seed)] = r
                say(f"  theirs {kind} {key} lambda={lam} seed={seed}: {r['wall']:.0f} s")
            except Exception as err:          # reported at the end, the others go on
                with lock:
                    errors.append(str(err))
                say(f"  theirs {kind} {key} lambda={lam} seed={seed}: FAILED")

    say(f"{tasks.qsize()} Octave runs, {args.jobs} at a time; {work}")
    threads = [threading.Thread(target=worker) for _ in range(args.jobs)]
    for t in threads:
        t.start()
    # ours meanwhile, in this thread (their order files appear as their runs start)
    ours_same, ours_own, commands = {}, {}, {}
    for key in args.solvers:
        for lam in args.lambdas:
            order = None
            if key != "fw":
                _, order = their_order(work, args, args.seed, args.passes)
            commands[(key, lam)], ours_same[(key, lam)], _ = ours(
                work, args, key, lam, args.passes, args.seed, order)
    for seed in range(1, args.seeds + 1):
        for key in args.solvers:
            if key == "fw":
                continue
            for lam in args.seed_lambdas:
                _, ours_own[(key, lam, seed)], _ = ours(work, args, key, lam, args.seed_passes,
                                                        seed)
    for t in threads:
        t.join()
    timing = {}       # ours alone (their runs done), 10 passes each
    for key in args.solvers:
        for lam in args.lambdas:
            _, _, timing[(key, lam)] = ours(work, args, key, lam, 10, 0)
    report(args, work, results, ours_same, ours_own, timing, commands, errors)


def report(args, work, results, ours_same, ours_own, timing, commands, errors):
    lines = []
    out = lines.append
    version = next((r["version"] for r in results.values()), "?")
    d = next((r["d"] for r in results.values()), "?")
    out(f"Their code: BCFWstruct {args.rev}, GNU Octave {version}; d = {d} (theirs), "
        f"n = {N_TRAIN}. Same order: their rand_seed {args.seed}, {args.passes} passes.")
    out("")
    out("| solver | lambda | passes | primal | dual | gap | s/pass theirs | s/pass ours |")
    out("|---|---|---|---|---|---|---|---|")
    for key in args.solvers:
        for lam in args.lambdas:
            r = results.get(("same", key, lam, args.seed))
            t = results.get(("time", key, args.lambdas[0], args.seed))
            their_s = (f"{t['seconds'] / args.time_passes:.1f}"
                       if t and lam == args.lambdas[0] else "")
            if r is None:
                out(f"| {key} | {lam} | - | failed | | | {their_s} | {timing[(key, lam)]:.3f} |")
                continue
            c = compare(r, ours_same[(key, lam)], key)
            fmt = lambda x: "-" if np.isnan(x) else f"{x:.1e}"  # noqa: E731
            out(f"| {key} | {lam} | {c['passes']} | {fmt(c['primal'])} | {fmt(c['dual'])} | "
                f"{fmt(c['gap'])} | {their_s} | {timing[(key, lam)]:.3f} |")
    out("")
    out("Per pass, same order (theirs / ours):")
    for key in args.solvers:
        for lam in args.lambdas:
            r = results.get(("same", key, lam, args.seed))
            if r is None:
                continue
            for p, tp in enumerate(r["primal"], start=1):
                op, od, og = ours_same[(key, lam)][p]
                td = r["dual"][p - 1] if "dual" in r else np.nan
                out(f"  {key} lambda={lam} pass {p}: primal {tp:.12g} / {op:.12g}, "
                    f"dual {td:.12g} / {od:.12g}")
    noshim = results.get(("noshim", "bcfw", args.lambdas[0], args.seed))
    if noshim is not None:
        same = results.get(("same", "bcfw", args.lambdas[0], args.seed))
        equal = same is not None and noshim["primal"] == same["primal"] and \
            noshim["dual"] == same["dual"]
        out("")
        out(f"randi shim check (their BCFW, lambda={args.lambdas[0]}, without the shim): "
            f"{'bit for bit the same' if equal else 'DIFFERENT'}")
    if args.seeds:
        out("")
        out(f"Seed spread, each side its own orders, seeds 1-{args.seeds}: primal per pass, "
            "mean (min-max)")
        out("")
        out("| solver | lambda | pass | theirs | ours |")
        out("|---|---|---|---|---|")
        for key in args.solvers:
            if key == "fw":
                continue
            for lam in args.seed_lambdas:
                for p in range(1, args.seed_passes + 1):
                    th = [results[("own", key, lam, s)]["primal"][p - 1]
                          for s in range(1, args.seeds + 1) if ("own", key, lam, s) in results]
                    ou = [ours_own[(key, lam, s)][p][0] for s in range(1, args.seeds + 1)]
                    span = lambda v: (f"{np.mean(v):.5f} ({min(v):.5f}-{max(v):.5f})"  # noqa: E731
                                      if v else "-")
                    out(f"| {key} | {lam} | {p} | {span(th)} | {span(ou)} |")
    out("")
    out("Ours: " + "; ".join(sorted(set(commands.values()))))
    out(f"Machine: {platform.machine()}, {os.cpu_count()} cores; load {os.getloadavg()}")
    if errors:
        out("")
        out("FAILED runs:")
        lines.extend(errors)
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    (work / "report.md").write_text(text + "\n")
    (work / "results.json").write_text(json.dumps(
        {f"{k[0]}|{k[1]}|{k[2]}|{k[3]}": v for k, v in results.items()}, indent=1))
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
