"""Tasks: joint feature maps, losses, oracles and metrics (one module per output structure),
each declared once as a :class:`~ssvmbench.tasks.base.Task` subclass. The built-in ones are
:data:`TASK_MODULES`; other installed packages register theirs under the entry-point group
``ssvmbench.tasks`` (``NAME = "module:TaskClass"``). Also here: the oracle record a solver
and a task share (``oracle``), the test metrics beyond the task loss (``metrics``) and the
kernel API solvers call (``kernels``). A new task goes here, or in a plugin. May import
common and data."""

from functools import cache
from importlib import import_module

from ssvmbench.common import plugins
from ssvmbench.common.errors import Incompatible, UserError

# module:class of each built-in task (imported on first use: the kernels import this package)
TASK_MODULES = ("chain_task:ChainTask", "hashed_chain:HashedChainTask", "boxes:BoxTask",
                "matching:MatchingTask")
ENTRY_POINTS = "ssvmbench.tasks"
DEFAULT_LOSS = "normalized_hamming"     # the config's loss (BCFW Appendix F)


def _check(cls):
    """Why ``cls`` is not a usable task declaration, or None."""
    from ssvmbench.tasks.base import CORE_KERNELS, KERNEL_NAMES, Task
    if not (isinstance(cls, type) and issubclass(cls, Task)):
        return "is not a subclass of ssvmbench.tasks.base.Task"
    missing = [k for k in CORE_KERNELS if k not in cls.kernels]
    unknown = sorted(set(cls.kernels) - set(KERNEL_NAMES))
    if missing or unknown or not (cls.dataset_type and cls.data_type and cls.LOSSES):
        return (f"does not declare dataset_type, data_type, LOSSES and the kernels "
                f"{list(CORE_KERNELS)} (missing: {missing}; not in the kernel API: {unknown})")
    return None


@cache
def registered():
    """``{kind: Task class}`` of the built-in tasks and of the installed plugins; a plugin
    that does not load, does not declare itself or takes a built-in's name is refused by
    name."""
    built_in = {}
    for spec in TASK_MODULES:
        module, name = spec.split(":")
        cls = getattr(import_module(f"ssvmbench.tasks.{module}"), name)
        built_in[cls.kind] = cls
    found = plugins.load(ENTRY_POINTS, "task", built_in, _check, lambda cls: cls.kind)
    owners = {cls.data_type: kind for kind, cls in built_in.items()}
    for kind, cls in found.items():
        if cls.data_type in owners:
            raise UserError(f"{describe(cls)} declares data_type {cls.data_type.__name__}, "
                            f"which task {owners[cls.data_type]} owns: the compiled kernels "
                            "dispatch on the data's type, so it would run that task's kernels; "
                            "give the task a data type of its own (a NamedTuple of its arrays)")
        owners[cls.data_type] = kind
    return {**built_in, **found}


def describe(cls):
    """``task KIND``, and for a plugin where it comes from (its class, its entry point)."""
    if is_built_in(cls):
        return f"task {cls.kind}"
    return f"task {cls.kind} (plugin {cls.__module__}:{cls.__qualname__}, entry point {ENTRY_POINTS})"


def blame(cls):
    """:func:`ssvmbench.common.plugins.blamed` for task class ``cls``: one line naming it when it is
    a plugin's."""
    return plugins.blamed([] if is_built_in(cls) else [describe(cls)])


def is_built_in(cls):
    """Whether task class ``cls`` is one of ssvmbench's own (not a plugin's)."""
    return cls.__module__.startswith("ssvmbench.tasks.")


@cache
def task_of_data(data_type):
    """The task class whose kernels take data of type ``data_type``, or None."""
    return next((cls for cls in registered().values() if cls.data_type is data_type), None)


def make_task(dataset, loss=DEFAULT_LOSS):
    """The task of a split: the registered task whose ``dataset_type`` is the most derived
    class ``dataset`` is an instance of, with task loss ``loss`` (the config's default,
    ``normalized_hamming``, stands for a task's own default where it has no such loss)."""
    matches = [cls for cls in registered().values() if isinstance(dataset, cls.dataset_type)]
    if not matches:
        taken = sorted(c.dataset_type.__name__ for c in registered().values())
        raise UserError(f"no task for data of type {type(dataset).__name__}: the installed "
                        f"tasks take {taken}")
    cls = max(matches, key=lambda c: len(c.dataset_type.__mro__))
    if loss not in cls.LOSSES:
        if loss != DEFAULT_LOSS:
            raise Incompatible(f"loss={loss} is not a loss of the {cls.kind} task "
                               f"(data={dataset.name}): choose one of {list(cls.LOSSES)} or "
                               "drop the loss= override")
        loss = cls.LOSSES[0]
    with blame(cls):
        return cls(dataset, loss)
