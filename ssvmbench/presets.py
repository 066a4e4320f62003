"""``ssvmbench reproduce PRESET...``: the sweeps and plots of one paper figure or table.

A preset is ``configs/experiment/<name>.yaml``: the paper item, its claim, its
``deviations`` from the paper (``{id: what still differs}``, printed under its figures) and
the ``checks`` of the claim (:mod:`ssvmbench.claims`, reported by ``ssvmbench report``; each
quotes the sentence it tests, says ``why`` its quantification is a fair reading and may name
the deviation that makes it ``not_comparable``), named
``sweeps`` (each one ``ssvmbench run -m``, run as a subprocess into ``OUT/logs/<sweep>``),
the ``plot`` options (figures in ``OUT/<name>``), the ``names`` the figures give the curves
(``plot --names``, :mod:`ssvmbench.plotting.names`: our curve label or a pattern of it ->
the paper's name of the method), and ``sizes`` (``full``: the paper's passes
and seeds; ``smoke``: a subset of the data, few passes, two seeds, plus its ``overrides``;
each may carry ``measured``, the run time of a reproduction at that size on the README's
2-core VM, from which ``reproduce`` estimates the time a reproduction takes).
``{seeds}`` in a sweep takes the size's seeds, ``{passes}`` in the plot options its passes
(a sweep may set its own ``solver.passes`` for the full size). A sweep of the same name is
the same in every preset (Figures 1a-c, 2 and 3 share the OCR runs), and sweeps resume
(finished runs are skipped), so presets share their runs and an interrupted one, run again,
redoes only what is missing.
"""

import shlex
import sys
from pathlib import Path

from ssvmbench import claims
from ssvmbench.batch import check_jobs, expected_wall_s, is_hydra_override, sweep_jobs
from ssvmbench.errors import UserError, read_yaml
from ssvmbench.files import write_atomically
from ssvmbench.launchers import launcher_settings, run_batch, workers
from ssvmbench.messages import duration
from ssvmbench.plotting.names import check_names
from ssvmbench.paths import config_dir
from ssvmbench.provenance import committed_files

KEYS = {"paper", "item", "claim", "deviations", "checks", "sweeps", "plot", "sizes"}
OPTIONAL_KEYS = {"paper_table",   # a table's rows as printed in the paper (SAP Tables II-IV)
                 "names"}         # curve label (or pattern) -> the paper's name (plot --names)
TABLE_ROW = ("table", "data", "solver", "C", "rho1", "nnz", "accuracy")
PRESET_COPY = "preset.yaml"    # a preset file's copy beside its figures, for the report


def preset_dir() -> Path:
    return config_dir() / "experiment"


def available():
    return sorted(path.stem for path in preset_dir().glob("*.yaml"))


def figure_dir(name):
    """The folder of a preset's figures under ``--out``: its name, a preset file's stem, or
    the folder of a preset file's copy."""
    path = Path(name)
    return path.parent.name if path.name == PRESET_COPY else path.stem


def expand(names):
    """Preset names, a paper's prefix (``bcfw``, ``casimir``, ``sap``) standing for all of
    its presets, and paths of preset files (``*.yaml``) outside the package."""
    known = available()
    chosen = []
    for name in names:
        if name.endswith(".yaml"):
            if not Path(name).is_file():
                raise UserError(f"preset file {name} not found")
            chosen.append(name)
            continue
        matches = [name] if name in known else [k for k in known if k.startswith(name + "_")]
        if not matches:
            raise UserError(f"unknown preset '{name}': choose from {known} or a paper prefix")
        chosen += [m for m in matches if m not in chosen]
    return chosen


def load(name):
    """The preset ``name`` (or preset file ``*.yaml``), checked: every key known, both sizes
    with passes and seeds, every check quoted, explained and tied to a real deviation."""
    path = Path(name) if name.endswith(".yaml") else preset_dir() / f"{name}.yaml"
    if not path.is_file():
        raise UserError(f"unknown preset '{name}': choose from {available()}")
    preset = read_yaml(path)
    if not isinstance(preset, dict):
        raise UserError(f"{path}: a preset is a YAML mapping (see configs/experiment/)")
    missing, unknown = KEYS - set(preset), set(preset) - KEYS - OPTIONAL_KEYS
    if missing or unknown:
        raise UserError(f"{path}: missing keys {sorted(missing)}, unknown keys {sorted(unknown)}")
    for size in ("full", "smoke"):
        spec = preset["sizes"].get(size) or {}
        if not (isinstance(spec.get("passes"), (int, float)) and isinstance(spec.get("seeds"), int)):
            raise UserError(f"{path}: sizes.{size} needs numeric passes and integer seeds")
        measured = spec.get("measured")
        if measured is not None and not (isinstance(measured, dict) and all(
                isinstance(measured.get(key), (int, float)) and measured[key] > 0
                for key in ("runs", "run_s", "longest_s"))):
            raise UserError(f"{path}: sizes.{size}.measured needs positive runs, run_s and "
                            "longest_s (from a reproduction's logs)")
    deviations = preset["deviations"] or {}
    if not isinstance(deviations, dict):
        raise UserError(f"{path}: deviations must map a short id to what differs from the paper")
    for number, check in enumerate(preset["checks"] or []):
        where = f"{path}: checks[{number}]"
        claims.validate(check, where)
        if not (check.get("quote") and check.get("why")):
            raise UserError(f"{where}: give the paper's sentence it tests (quote) and why its "
                            "quantification is a fair reading (why)")
        if "not_comparable" in check and check["not_comparable"] not in deviations:
            raise UserError(f"{where}: not_comparable names {check['not_comparable']!r}, not "
                            f"one of the preset's deviations {sorted(deviations)}")
    check_names(preset.get("names") or {}, path)
    for number, row in enumerate(preset.get("paper_table") or []):
        if not (isinstance(row, dict) and set(row) == set(TABLE_ROW)):
            raise UserError(f"{path}: paper_table[{number}] needs exactly {list(TABLE_ROW)}")
    return preset


def paper_table():
    """``{(data, solver, C, rho1): [(table, #NZ, accuracy %)]}``: the rows of every preset's
    ``paper_table``, as the paper printed them."""
    rows = {}
    for name in available():
        for row in load(name).get("paper_table") or []:
            key = (row["data"], row["solver"], float(row["C"]), float(row["rho1"]))
            rows.setdefault(key, []).append((str(row["table"]), row["nnz"], row["accuracy"]))
    return rows


def commands(name, size, out, extra=()):
    """The ``ssvmbench`` argument lists that reproduce preset ``name`` at ``size`` under
    ``out``: one ``run -m`` per sweep, then ``plot``. ``extra``: overrides (e.g. a
    launcher) added to every sweep; one that sets a key the sweep sets replaces it (e.g.
    ``data=voc`` for the synthetic scenes of Casimir Figure 2b)."""
    preset = load(name)
    if size not in preset["sizes"]:
        raise UserError(f"--size {size}: preset {name} has sizes {sorted(preset['sizes'])}")
    spec = preset["sizes"][size]
    seeds = ",".join(map(str, range(spec["seeds"])))
    logs = Path(out) / "logs"
    runs = []
    for sweep, overrides in preset["sweeps"].items():
        words = shlex.split(overrides.replace("{seeds}", seeds))
        if size != "full" or not any(w.startswith("solver.passes=") for w in words):
            # a sweep's own passes are full-size passes; other sizes use their own
            words = [w for w in words if not w.startswith("solver.passes=")]
            words.append(f"solver.passes={spec['passes']}")
        words = _replace(words, shlex.split(spec.get("overrides", "")))
        runs.append(["run", "-m", *_replace(words, extra), f"hydra.sweep.dir={logs / sweep}"])
    plot = ["plot", *(str(logs / sweep) for sweep in preset["sweeps"]),
            "-o", str(Path(out) / figure_dir(name)),
            *shlex.split(preset["plot"].replace("{passes}", str(spec["passes"]))),
            *(["--names", name] if preset.get("names") else [])]
    return runs + [plot]


def distinct_steps(names, size, out, extra=()):
    """The :func:`commands` of the presets ``names``, a sweep shared by several presets once
    (where it first comes), each preset's plot after its sweeps."""
    steps, listed = [], set()
    for name in names:
        for step in commands(name, size, out, extra):
            if step[0] == "run" and step[-1] in listed:
                continue
            listed.add(step[-1])
            steps.append(step)
    return steps


def sweep_runs(words):
    """How many runs a ``run -m`` sweep makes: the product of the value counts of its
    ``key=a,b,c`` overrides (commas inside brackets do not separate values)."""
    runs = 1
    for word in words:
        key, sep, value = word.partition("=")
        if sep and not key.startswith("hydra"):
            depth, count = 0, 1
            for char in value:
                if char in "[(":
                    depth += 1
                elif char in "])":
                    depth -= 1
                elif char == "," and depth == 0:
                    count += 1
            runs *= count
    return runs


def cost(name, size):
    """``(runs, passes)`` of preset ``name`` at ``size``: its sweeps' runs, the passes of
    each run at most."""
    steps = commands(name, size, "OUT")[:-1]
    return sum(sweep_runs(step[2:]) for step in steps), load(name)["sizes"][size]["passes"]


STARTUP_S = 1.5   # per run, outside its log's times: process start, imports, data loading
#                   and kernels from warm caches (a smoke reproduction of all presets: 443 s
#                   for 191 runs with their plots, 109 s of it in the runs' logs)


def _seconds_per_run(name, size):
    """The mean run time measured for preset ``name`` at ``size`` (``sizes.SIZE.measured``:
    ``runs``, ``run_s``, ``longest_s``, from a reproduction's logs on the README's 2-core
    VM) plus :data:`STARTUP_S`; None without a measurement."""
    measured = load(name)["sizes"][size].get("measured")
    return measured["run_s"] / measured["runs"] + STARTUP_S if measured else None


def estimate(name, size):
    """``(run seconds, longest run seconds)`` expected for preset ``name`` at ``size``: its
    runs times :func:`_seconds_per_run`, and the longest run measured; None without a
    measurement."""
    per_run = _seconds_per_run(name, size)
    if per_run is None:
        return None
    longest = load(name)["sizes"][size]["measured"]["longest_s"] + STARTUP_S
    return per_run * cost(name, size)[0], longest


def batch_jobs(names, size, out, extra=()):
    """The runs of the presets ``names`` at ``size`` under ``out`` as one batch
    (:class:`~ssvmbench.batch.Job`), a run shared by several presets once (BCFW Figures 1a-c,
    2 and 3 share the OCR runs), each expected to take its preset's measured mean run time
    plus :data:`STARTUP_S` (0 without a measurement)."""
    jobs = {}
    for name in names:
        expected = _seconds_per_run(name, size) or 0.0
        for step in commands(name, size, out, extra)[:-1]:     # run -m ... hydra.sweep.dir=D
            for job in sweep_jobs(step[2:], step[-1].split("=", 1)[1], expected):
                jobs.setdefault(job.run_dir, job)
    return list(jobs.values())


def _distinct_runs(names, size):
    """``(runs, seconds or None)`` of the presets ``names`` at ``size``, a sweep shared by
    several presets counted once."""
    jobs = batch_jobs(names, size, "OUT")
    measured = all(_seconds_per_run(name, size) for name in names)
    return len(jobs), (sum(job.expected_s for job in jobs) if measured else None)


def _cost_text(name, size):
    runs, passes = cost(name, size)
    text = f"{size}: {runs} runs of up to {passes:g} pass{'es' * (passes != 1)}"
    expected = estimate(name, size)
    return text + (f", ~{duration(expected[0])} of run time" if expected else "")


def _replace(words, extra):
    """``words`` with the overrides ``extra`` added, each replacing a word of the same key."""
    def key(word):
        return word.split("=", 1)[0].lstrip("+~")
    given = {key(word) for word in extra}
    return [word for word in words if key(word) not in given] + list(extra)


def configure_parser(parser):
    parser.add_argument("presets", nargs="*", metavar="PRESET",
                        help="configs/experiment/PRESET.yaml, or a paper (bcfw: all its "
                             "presets); none: list them")
    parser.add_argument("--size", choices=["full", "smoke"],
                        help="full (the default): the paper's passes and seeds, asked for "
                             "confirmation at a terminal unless given; smoke: a data subset, "
                             "few passes, two seeds (about a minute)")
    parser.add_argument("--out", metavar="DIR",
                        help="logs go to DIR/logs/SWEEP, figures to DIR/PRESET, the report of "
                             "every preset in DIR to DIR/report.md (default: "
                             "results/reproduce/SIZE)")
    parser.add_argument("--dry-run", action="store_true", help="print the commands only")
    parser.add_argument("--overwrite-committed", action="store_true",
                        help="allow an --out that holds results committed to git (refused "
                             "otherwise, so that a checkout's results are not redrawn by "
                             "accident)")
    parser.add_argument("--overrides", nargs="+", default=[], metavar="OVERRIDE",
                        help="added to every sweep, replacing a value the sweep sets "
                             "(data=voc for the synthetic scenes), e.g. --overrides "
                             "hydra/launcher=joblib "
                             "hydra.launcher.n_jobs=2")


def main(args):
    if not args.presets:
        for name in available():
            preset = load(name)
            item = f"{preset['paper']} {preset['item']}"
            print(f"{name:28s} {item:32s} {_cost_text(name, 'full')}; "
                  f"{_cost_text(name, 'smoke')}")
        return 0
    size = args.size or "full"
    out = Path(args.out or f"results/reproduce/{size}")
    names = expand(args.presets)
    hydra = [word for word in args.overrides if is_hydra_override(word)]
    jobs = batch_jobs(names, size, out, [w for w in args.overrides if w not in hydra])
    settings = launcher_settings(hydra, out / "logs")
    parallel, startup_s = workers(settings, len(jobs))
    passes = max(load(name)["sizes"][size]["passes"] for name in names)
    steps = distinct_steps(names, size, out, args.overrides)
    sweeps = sum(step[0] == "run" for step in steps)
    plan = (f"{size} size: {sweeps} sweep{'s' * (sweeps != 1)}, {len(jobs)} runs of up to "
            f"{passes:g} passes ({', '.join(names)})")
    if all(_seconds_per_run(name, size) for name in names):
        longest = max(estimate(name, size)[1] for name in names) + startup_s
        wall = max(expected_wall_s(jobs, parallel, startup_s), longest)
        plan += (f"; measured on a 2-core VM: ~{duration(sum(j.expected_s for j in jobs))} of "
                 f"run time, ~{duration(wall)} of wall time as one batch on {parallel} "
                 f"worker{'s' * (parallel > 1)}"
                 + (" (--overrides hydra/launcher=joblib hydra.launcher.n_jobs=2: two)"
                    if parallel == 1 else ""))
    if args.size is None and not args.dry_run and sys.stdin.isatty():
        answer = input(f"{plan}. Run the full size? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing run; --size smoke runs a small version in minutes")
            return 0
    print(f"# {plan}", flush=True)
    for step in steps:
        print("#   ssvmbench " + shlex.join(step), flush=True)
    if args.dry_run:
        return 0
    committed = committed_files(out)
    if committed and not args.overwrite_committed:
        raise UserError(f"{out} holds results committed to git (e.g. {committed[0]}): give "
                        "another --out, or --overwrite-committed to redraw them")
    for name in names:
        if name.endswith(".yaml"):                        # the report finds it there
            write_atomically(out / figure_dir(name) / PRESET_COPY,
                             lambda file: file.write(Path(name).read_bytes()))
    check_jobs(jobs)
    status = run_batch(jobs, settings)
    if status:
        print("ssvmbench reproduce: the plots and the report follow when every run is done: "
              "run the same command again (finished runs are kept)", file=sys.stderr)
        return status
    for step in [commands(name, size, out)[-1] for name in names] + [["report", str(out)]]:
        print("ssvmbench " + shlex.join(step), flush=True)
        if _execute(step):
            raise UserError(f"step failed: ssvmbench {shlex.join(step)}; fix it and run "
                            "the same command again (finished runs are kept and skipped)")
    return 0


def _execute(step):
    """Exit code of a plot or report step, run in this process."""
    from ssvmbench import cli

    return cli.main(step)
