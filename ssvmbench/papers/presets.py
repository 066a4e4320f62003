"""``ssvmbench reproduce PRESET...``: the sweeps and plots of one paper figure or table.

A preset is ``configs/experiment/<name>.yaml``: the paper item, its claim, its
``deviations`` from the paper (``{id: what still differs}``, printed under its figures) and
the ``checks`` of the claim (:mod:`ssvmbench.papers.claims`, reported by ``ssvmbench report``; each
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

``with`` (named like ``sweeps``) is what a method added to the figures runs on
(``reproduce --with``, :mod:`ssvmbench.papers.added`): the figure's data, λ values, seeds, pass
budget and checkpoints, without a solver or an oracle, which the added method brings; a
``with`` sweep of the same name is the same in every preset.
"""

import re
import shlex
from pathlib import Path

from ssvmbench.batch.jobs import sweep_jobs
from ssvmbench.common.errors import UserError, read_yaml
from ssvmbench.common.messages import duration
from ssvmbench.common.paths import config_dir
from ssvmbench.papers import claims
from ssvmbench.plotting.names import check_names
from ssvmbench.run.runlog import override_key

KEYS = {"paper", "item", "claim", "deviations", "checks", "sweeps", "plot", "sizes"}
OPTIONAL_KEYS = {"paper_table",   # a table's rows as printed in the paper (SAP Tables II-IV)
                 "with",          # what a method added with `reproduce --with` runs on
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
    for sweep, words in (preset.get("with") or {}).items():
        method = [w for w in shlex.split(words) if is_method_setting(w)]
        if method:
            raise UserError(f"{path}: with.{sweep} sets {method[0]}: the added method brings "
                            "its solver and oracle; give the figure's data, lambda, seeds, "
                            "passes and checkpoints only")
    for number, row in enumerate(preset.get("paper_table") or []):
        if not (isinstance(row, dict) and set(row) == set(TABLE_ROW)):
            raise UserError(f"{path}: paper_table[{number}] needs exactly {list(TABLE_ROW)}")
    return preset


def plot_inputs(options):
    """``(names, paper_rows)`` of a plot with ``options`` (the plot options): the curve names
    its ``--names`` gives (:func:`load_names`; none without) and, for ``--best-within``, the
    paper's table rows (:func:`paper_table`)."""
    names = load_names(options.names) if options.names else {}
    return names, paper_table() if options.best_within is not None else {}


def paper_table():
    """``{(data, solver, C, rho1): [(table, #NZ, accuracy %)]}``: the rows of every preset's
    ``paper_table``, as the paper printed them."""
    rows = {}
    for name in available():
        for row in load(name).get("paper_table") or []:
            key = (row["data"], row["solver"], float(row["C"]), float(row["rho1"]))
            rows.setdefault(key, []).append((str(row["table"]), row["nnz"], row["accuracy"]))
    return rows


def is_method_setting(word):
    """Whether an override sets a method (its solver or oracle), not the problem it solves,
    the seeds or the checkpoints: ``solver=``, ``solver.*=``, ``oracle=``, ``oracle.*=``,
    except the pass budget ``solver.passes``."""
    key = override_key(word)
    return key != "solver.passes" and (key in ("solver", "oracle")
                                       or key.startswith(("solver.", "oracle.")))


def _sweep_words(overrides, spec, size, extra=()):
    """The override words of a preset sweep at ``size`` (``spec``: the size's entry): its
    seeds, its passes (a sweep's own ``solver.passes`` counts at full size only), the size's
    overrides, then ``extra``, each replacing a word of the same key."""
    words = shlex.split(overrides.replace("{seeds}", ",".join(map(str, range(spec["seeds"])))))
    if size != "full" or not any(w.startswith("solver.passes=") for w in words):
        # a sweep's own passes are full-size passes; other sizes use their own
        words = [w for w in words if not w.startswith("solver.passes=")]
        words.append(f"solver.passes={spec['passes']}")
    return _replace(_replace(words, shlex.split(spec.get("overrides", ""))), extra)


def size_spec(name, size):
    """The preset's entry for ``size`` (passes, seeds, overrides), or one clear error."""
    preset = load(name)
    if size not in preset["sizes"]:
        raise UserError(f"--size {size}: preset {name} has sizes {sorted(preset['sizes'])}")
    return preset["sizes"][size]


def added_sweeps(name, size, out, method_words, folder, extra=()):
    """``{with sweep: run -m words}`` of a method added to preset ``name``'s figures
    (``reproduce --with``): each ``with`` sweep of the preset at ``size``, with the method's
    words (its solver and oracle settings) and ``extra``, into
    ``OUT/logs/added/FOLDER/SWEEP``."""
    spec = size_spec(name, size)
    with_sweeps = load(name).get("with")
    if not with_sweeps:
        raise UserError(f"preset {name} has no `with` sweeps, so no method can be added to its "
                        "figures; give it `with:` (the figure's data, lambda, seeds, passes "
                        "and checkpoints, see configs/experiment/bcfw_figure2_ocr.yaml)")
    return {sweep: ["run", "-m", *_sweep_words(words, spec, size, [*method_words, *extra]),
                    f"hydra.sweep.dir={Path(out) / 'logs' / 'added' / folder / sweep}"]
            for sweep, words in with_sweeps.items()}


def commands(name, size, out, extra=()):
    """The ``ssvmbench`` argument lists that reproduce preset ``name`` at ``size`` under
    ``out``: one ``run -m`` per sweep, then ``plot``. ``extra``: overrides (e.g. a
    launcher) added to every sweep; one that sets a key the sweep sets replaces it (e.g.
    ``data=voc`` for the synthetic scenes of Casimir Figure 2b)."""
    preset, spec = load(name), size_spec(name, size)
    logs = Path(out) / "logs"
    runs = [["run", "-m", *_sweep_words(overrides, spec, size, extra),
             f"hydra.sweep.dir={logs / sweep}"] for sweep, overrides in preset["sweeps"].items()]
    return runs + [plot_step(name, size, out, [str(logs / sweep) for sweep in preset["sweeps"]])]


def plot_step(name, size, out, sources, added=()):
    """The ``plot`` arguments of preset ``name``'s figures at ``size`` in ``OUT/PRESET``
    from the logs or traces ``sources``, with the methods ``added`` (``[[LABEL, DIR...]]``,
    ``plot --added``)."""
    preset, spec = load(name), size_spec(name, size)
    return ["plot", *map(str, sources), "-o", str(Path(out) / figure_dir(name)),
            *shlex.split(preset["plot"].replace("{passes}", str(spec["passes"]))),
            *(["--names", name] if preset.get("names") else []),
            *(word for method in added for word in ["--added", *map(str, method)])]


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


STARTUP_S = 0.75  # per run, outside its log's times: process start, imports, data loading
#                   and kernels from warm caches (the full-size reproduction of all presets in
#                   three batches on two workers, plots included: about 3 h 12 min of wall time
#                   for 796 runs with 6.24 h in their logs)


def seconds_per_run(name, size):
    """The mean run time measured for preset ``name`` at ``size`` (``sizes.SIZE.measured``:
    ``runs``, ``run_s``, ``longest_s``, from a reproduction's logs on the README's 2-core
    VM) plus :data:`STARTUP_S`; None without a measurement."""
    measured = load(name)["sizes"][size].get("measured")
    return measured["run_s"] / measured["runs"] + STARTUP_S if measured else None


def estimate(name, size):
    """``(run seconds, longest run seconds)`` expected for preset ``name`` at ``size``: its
    runs times :func:`seconds_per_run`, and the longest run measured; None without a
    measurement."""
    per_run = seconds_per_run(name, size)
    if per_run is None:
        return None
    longest = load(name)["sizes"][size]["measured"]["longest_s"] + STARTUP_S
    return per_run * cost(name, size)[0], longest


def batch_jobs(names, size, out, extra=()):
    """The runs of the presets ``names`` at ``size`` under ``out`` as one batch
    (:class:`~ssvmbench.batch.jobs.Job`), a run shared by several presets once (BCFW Figures 1a-c,
    2 and 3 share the OCR runs), each expected to take its preset's measured mean run time
    plus :data:`STARTUP_S` (0 without a measurement)."""
    jobs = {}
    for name in names:
        expected = seconds_per_run(name, size) or 0.0
        for step in commands(name, size, out, extra)[:-1]:     # run -m ... hydra.sweep.dir=D
            for job in sweep_jobs(step[2:], step[-1].split("=", 1)[1], expected):
                jobs.setdefault(job.run_dir, job)
    return list(jobs.values())


def _distinct_runs(names, size):
    """``(runs, seconds or None)`` of the presets ``names`` at ``size``, a sweep shared by
    several presets counted once."""
    jobs = batch_jobs(names, size, "OUT")
    measured = all(seconds_per_run(name, size) for name in names)
    return len(jobs), (sum(job.expected_s for job in jobs) if measured else None)


def cost_text(name, size):
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


def smaller_than_full(preset, df):
    """What makes the logs ``df`` of ``preset`` smaller than its full size (passes, training
    data), or ``""``."""
    parts = []
    passes, full = float(df["effective_pass"].max()), preset["sizes"]["full"]["passes"]
    if passes < 0.9 * full:
        parts.append(f"{passes:g} effective passes (full size: {full})")
    fractions = sorted({m.group(1) for variant in df["data_variant"].dropna().astype(str)
                        for m in [_SUBSET.search(variant)] if m})
    if fractions:
        parts.append(f"the first {', '.join(fractions)} of the training data")
    return "; ".join(parts)


_SUBSET = re.compile(r"first ([0-9.eE-]+) of train")


def load_names(spec):
    """The ``names`` mapping given to ``plot --names``: a preset's name, a preset file, or
    a YAML file that is the mapping itself; checked (:func:`check_names`)."""
    if not str(spec).endswith((".yaml", ".yml")):
        return check_names(load(spec).get("names") or {}, f"preset {spec}")
    if not Path(spec).is_file():
        raise UserError(f"--names {spec}: no such file; give a preset or a YAML file "
                        "mapping curve labels (or patterns) to names")
    content = read_yaml(spec)
    if isinstance(content, dict) and "sweeps" in content:      # a preset file
        content = content.get("names") or {}
    return check_names(content, spec)
