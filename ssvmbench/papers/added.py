"""Methods added to the papers' figures: ``ssvmbench reproduce PRESET --with solver=NAME
[KEY=VALUE ...] [--as LABEL]``.

An added method is a solver with its settings and oracle (:class:`Method`). On each preset
it runs the preset's ``with`` sweeps (:func:`ssvmbench.papers.presets.added_sweeps`: the figure's
data, λ values, seeds, pass budget and checkpoints) into
``OUT/logs/added/FOLDER/SWEEP``, and its curves join the preset's figures under its label
(``plot --added``). Runs it cannot make (the task's kernels or oracles, the objective, the
loss: :func:`~ssvmbench.solvers.check_compatible`) are left out before anything
runs, one line per sweep and reason (:func:`plan`).
"""

import dataclasses
import re
from functools import cache

from omegaconf import OmegaConf

from ssvmbench.batch.jobs import sweep_jobs
from ssvmbench.common.errors import Incompatible, UserError
from ssvmbench.data import load_split
from ssvmbench.papers import presets
from ssvmbench.run.compose import Composer
from ssvmbench.run.runlog import override_key
from ssvmbench.run.settings import read
from ssvmbench.solvers import check_compatible, solver_class
from ssvmbench.tasks import make_task


@dataclasses.dataclass(frozen=True)
class Method:
    """A method added to the figures: its override ``words`` (``solver=NAME`` and solver or
    oracle settings) and the ``label`` its curves carry."""

    words: tuple
    label: str

    @property
    def folder(self):
        """Its runs' folder under ``OUT/logs/added``: its words, made safe for a path."""
        return re.sub(r"[^A-Za-z0-9_.=+-]+", "_", "-".join(
            word.removeprefix("solver=").removeprefix("solver.") for word in self.words)
        ).strip("_")


def methods(given):
    """The :class:`Method` of each ``--with`` (``[{"words": [...], "label": str | None}]``),
    checked: a ``solver=NAME``, solver and oracle settings only (the preset sets the data,
    lambda, seeds, passes and checkpoints), labels and folders distinct."""
    chosen = []
    for spec in given:
        words = tuple(spec["words"])
        solvers = [w for w in words if override_key(w) == "solver"]
        other = [w for w in words if "=" not in w or not presets.is_method_setting(w)]
        if len(solvers) != 1 or other:
            raise UserError(f"--with {' '.join(words)}: give solver=NAME and the method's "
                            "solver. / oracle settings (KEY=VALUE); the preset sets the data, "
                            "lambda, seeds, passes and checkpoints"
                            + (f" ({other[0]} is not a method setting)" if other else ""))
        label = spec["label"] if spec["label"] is not None else " ".join(
            [solvers[0].split("=", 1)[1]] + [w for w in words if w != solvers[0]])
        if not label.strip() or "\n" in label:
            raise UserError(f"--as {label!r}: give the method a one-line name")
        chosen.append(Method(words, label.strip()))
    for key in ("label", "folder"):
        values = [getattr(m, key) for m in chosen]
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            raise UserError(f"--with: two methods have the {key} {twice[0]!r}; tell them apart "
                            "(--as LABEL, or another setting)")
    return chosen


def refuse_paper_names(method, name):
    """Refuse an added method whose label is a curve name of preset ``name`` (a paper's name
    or one of our curve labels): the figures and the comparison would mix them up."""
    preset = presets.load(name)
    taken = set((preset.get("names") or {}).values()) | set((preset.get("names") or {}))
    if method.label in taken:
        raise UserError(f"--as {method.label!r}: preset {name} names one of its own curves "
                        "so; give the added method another label")


@dataclasses.dataclass
class Plan:
    """What ``--with`` adds: the runs to make, per preset the ``plot --added`` arguments
    (``[[LABEL, DIR, ...]]``), the ``run -m`` steps and a line per left-out sweep."""

    jobs: list = dataclasses.field(default_factory=list)
    added: dict = dataclasses.field(default_factory=dict)
    steps: list = dataclasses.field(default_factory=list)
    skipped: list = dataclasses.field(default_factory=list)


def plan(names, size, out, chosen, extra=()):
    """The :class:`Plan` of the methods ``chosen`` on the presets ``names`` at ``size``
    under ``out``; ``extra``: the ``--overrides`` of every sweep (a launcher), a run shared
    by several presets made once."""
    result, seen = Plan(), set()
    for name in names:
        expected = presets.seconds_per_run(name, size) or 0.0
        result.added[name] = []
        for method in chosen:
            refuse_paper_names(method, name)
            folders = []
            for sweep, step in presets.added_sweeps(name, size, out, method.words,
                                                    method.folder, extra).items():
                sweep_dir = step[-1].split("=", 1)[1]
                jobs, reasons = _runnable(sweep_jobs(step[2:], sweep_dir, expected))
                for reason, count in reasons.items():
                    result.skipped.append(
                        f"skipped: {method.label} on {sweep} ({presets.figure_dir(name)}, "
                        f"{count} of {count + len(jobs)} runs): {reason}")
                if not jobs:
                    continue
                folders.append(sweep_dir)
                if sweep_dir not in seen:
                    seen.add(sweep_dir)
                    result.steps.append(step)
                    result.jobs += [job for job in jobs if job.run_dir not in
                                    {j.run_dir for j in result.jobs}]
            if folders:
                result.added[name].append([method.label, *folders])
    return result


def _runnable(jobs):
    """``(jobs that can run, {reason: how many cannot})``: each distinct setting but the seed
    composed once and checked against the solver's declarations (:func:`incompatibility`);
    reasons that differ in numbers only (``l1=0.13``, ``l1=0.03``) count as one, told by
    the first."""
    keep, reasons, verdicts, first, composers = [], {}, {}, {}, {}
    for job in jobs:
        key = tuple(w for w in job.overrides if override_key(w) != "seed")
        if key not in verdicts:
            composer = composers.setdefault(job.search_path, Composer(job.search_path))
            verdicts[key] = incompatibility(composer.config(job.overrides))
        if verdicts[key] is None:
            keep.append(job)
            continue
        reason = first.setdefault(_NUMBER.sub("#", verdicts[key]), verdicts[key])
        reasons[reason] = reasons.get(reason, 0) + 1
    return keep, reasons


_NUMBER = re.compile(r"\d+(\.\d+)?([eE][-+]?\d+)?")


def incompatibility(cfg):
    """Why the run ``cfg`` cannot be made (its solver on its data's task with its oracle,
    loss and objective), or None; the data are loaded (once per data setting and loss) to
    know the task."""
    settings = read(cfg)
    try:
        task = _task(OmegaConf.to_yaml(cfg.data, resolve=True), settings.loss)
        _, l1 = settings.objective.at(task.n)
        check_compatible(solver_class(settings.solver), task, settings.oracle, l1)
    except Incompatible as err:
        return str(err)
    return None


@cache
def _task(data_yaml, loss):
    """The training task of the data setting ``data_yaml`` with ``loss``."""
    data = OmegaConf.to_container(OmegaConf.create(data_yaml), resolve=True)
    return make_task(load_split(data.pop("name"), **data).train, loss)
