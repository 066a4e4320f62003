"""The one seam between solvers and tasks: kernels that solvers call, dispatched at compile
time on the type of the task's ``data``, so that a solver never depends on a task's
internals.

Each name below runs the kernel of the same name that the task whose data it is given declares
(:attr:`Task.kernels <ssvmbench.tasks.base.Task.kernels>`, looked up in
:func:`ssvmbench.tasks.task_of_data`), chosen when the calling solver kernel is compiled (the
call is typed as a call of that kernel), so one solver kernel serves every task, a plugin's
included, and stays cacheable. A task's arrays: ``U`` its score rows (chains: tokens x labels;
boxes: candidates x 1; matchings: edges x 1), a direction ``(R, E)`` in ``w``-space, the
factored BCFW dual state ``(mu, Psum, blocks)``. ``example_oracle`` and ``decode`` are the
oracle calls: each adds one to ``data.calls[0]`` (``ssvmbench check-solver`` compares that
count with the calls a solver reports; a solver that reuses an answer it kept, SVRG at its
anchor, adds one for the call the answer stands for).

The API a compiled solver calls (``task`` a :class:`~ssvmbench.tasks.base.Task`; the oracle's
``bufs`` from :meth:`Task.oracle_scratch <ssvmbench.tasks.base.Task.oracle_scratch>`):

``scratch(dims, data, max_len) -> Scratch``
    the work arrays of a pass, a :class:`~ssvmbench.tasks.base.Scratch` ``(U, delta, y, R, E,
    dense)`` sized for examples of up to ``max_len`` rows.
``scores(w, ws, dims, data, i, U) -> T``
    score rows of example ``i`` at the weights ``ws * w`` into ``U``; returns its row count.
``example_oracle(kind, K, mu, w, ws, dims, data, normalized, i, U, T, bufs, y, R, E) -> f_i``
    the (smoothed) hinge of example ``i`` (``kind`` 0 max, 1 top-K, 2 exp) given its scores
    ``U``; its gradient with respect to ``ws * w`` is written to the direction ``(R, E)``.
``decode(w, dims, data, normalized, i, U, T, delta, y) -> loss``
    loss-augmented decoding (the max oracle of BCFW eq. 2) into ``y``; returns its task loss.
``add_direction(w, coef, dims, data, t0, T, R, E, avg_U, C)``
    ``w += coef * (R, E)`` for the example starting at row ``t0``, recorded in the lazy
    averages ``avg_U`` with weights ``C`` (empty: none).
``subtract_direction(data, T, R, E, R2, E2)``
    ``(R, E) -= (R2, E2)`` (two directions of one example).
``direction_sqnorm(dims, data, t0, T, R, E, dense) -> ||(R, E)||^2``
    ``dense``: the scratch's all-zero vector, left all-zero.
``direction_dot(w, dims, data, U, T, R, E) -> <w, (R, E)>`` given the scores ``U`` of ``w``.
``init_marginals(data, mu, Psum) -> blocks``, ``dual_residual(mu, blocks, data, i, t0, y, T,
R, E)``, ``move_marginals(mu, Psum, blocks, data, i, t0, T, gamma, R, E, avg_U, C) -> blocks``
    the factored BCFW dual state ``alpha`` at ``e_{y_i}``; the direction ``phi(y) -
    phi(alpha_i)``; the step ``alpha_i <- (1 - gamma) alpha_i + gamma e_y``.
``weights_from_average(alpha, avg_U, c, s, dims, data, lam, w)``
    ``w = A alpha_bar`` of an averaged dual state.
``labeling_hinge(w, dims, data, normalized, i, T, y)``, ``add_labeling(g, coef, dims, data,
i, T, y)``
    one stored labeling's hinge term; ``g += coef * (phi(y) - phi(y_i))``.
``labeling_score(w, dims, data, i, U, T, y) -> <w, phi(x_i, y)>`` given the scores ``U`` of
``w``; ``labeling_direction(data, i, T, y_plus, y_minus, R, E)``: ``(R, E) = phi(x_i, y_plus)
- phi(x_i, y_minus)``
    stored labelings (SAP's active sets; the gold ones from :meth:`Task.gold_labelings
    <ssvmbench.tasks.base.Task.gold_labelings>`).
``gram_scratch(dims, data, max_len) -> gram``, ``direction_gram(dims, data, t0, T, R, E,
dense, gram) -> ||(R, E)||^2``, ``add_direction_scores(U, coef, data, T, R, E, gram)``
    the squared norm of a direction, keeping in ``gram`` what updating the scores ``U`` of
    ``w`` after ``w += coef * (R, E)`` then needs (no feature reads).
``example_features(data, i)``
    the rows of ``w[:F*L].reshape(F, L)`` that example ``i``'s directions touch (repeats
    allowed); the entries after ``F*L`` may be touched by every example (SAP's lazy steps).
``part_scores(w, dims, data, normalized, i, U, T, G, g)``
    the loss-augmented scores of example ``i``'s parts given ``U``: rows ``G`` (``T x L``),
    the pair part ``g`` (:meth:`Task.marginal_sizes
    <ssvmbench.tasks.base.Task.marginal_sizes>` entries).
``marginals_scratch(dims, data, max_len) -> work``, ``part_marginals(dims, data, normalized,
i, T, V, v, work, rows, pairs, R, E, D, Ed) -> E_p L_i(y)``
    the marginals of ``p(y) ~ exp(<(V, v), parts(y)>)`` as a direction ``(R, E)`` (the
    expected ``phi(x_i, y)``), and ``(D, Ed) = (R, E) - (rows, pairs)``, the direction from
    the stored marginals ``(rows, pairs)``.
``expected_loss(data, normalized, i, T, R) -> E_p L_i(y)`` from the row marginals ``R``.
``gold_marginals(data, i, T, rows, pairs)``, ``store_marginals(data, T, R, E, rows, pairs)``
    the stored marginals (rows and pairs) of the point mass on ``y_i``, or of ``(R, E)``
    (online EG's blocks).
Composite steps the solvers expose: :func:`ssvmbench.solvers.bcfw.block_gap` and
:func:`ssvmbench.solvers.bcfw.block_step` (BCFW Algorithm 4 on one block).
"""

import numba as nb
import numpy as np
from numba import types
from numba.core.imputils import lower_builtin
from numba.core.typing.templates import AbstractTemplate, infer_global

from ssvmbench.tasks import task_of_data
from ssvmbench.tasks.base import COUNTED


def _unknown(name):
    return TypeError(f"no task kernels for data of type {name}: declare its task (a "
                     "ssvmbench.tasks.base.Task with data_type = that type)")


def _task_of(arg_types):
    """The task class of a call from the numba types of its arguments: the task whose
    ``data_type`` is the call's named tuple; an unknown named tuple, or none, is refused."""
    for t in arg_types:
        if isinstance(t, types.BaseNamedTuple):
            task = task_of_data(t.instance_class)
            if task is None:
                raise _unknown(t.instance_class.__name__)
            return task
    raise _unknown("tuple" if any(isinstance(t, types.BaseTuple) for t in arg_types)
                   else "(none)")


def _dispatch(name):
    """A function (callable from Python and from compiled code) that runs the kernel
    ``name`` of the task of its arguments' data; a task without that kernel is refused when
    the caller is compiled. An oracle call (:data:`~ssvmbench.tasks.base.COUNTED`)
    increments its data's ``calls[0]``."""
    counted = COUNTED.get(name)

    def generic(*args):
        tasks = [task_of_data(type(a)) for a in args if isinstance(a, tuple)]
        tasks = [t for t in tasks if t is not None]
        if not tasks:
            raise _unknown(", ".join(type(a).__name__ for a in args if isinstance(a, tuple))
                           or "(none)")
        if counted is not None:
            args[counted].calls[0] += 1
        return _kernel(tasks[0])(*args)

    def _kernel(task):
        if name not in task.kernels:
            raise TypeError(f"{name}: the {task.kind} task declares no such kernel")
        return task.kernels[name]

    # A call costs what calling the kernel directly costs: a numba function that only
    # forwards its arguments takes a reference to every array among them per call (OCR:
    # 14 arrays, 0.2 us; 1.5 ms of a BCFW pass per kernel), so a call is the kernel's own
    # (:func:`_direct`), an oracle call's count lowered into the caller before it.
    _direct(generic, lambda arg_types: _kernel(_task_of(arg_types)), counted)
    generic.__name__ = generic.__qualname__ = name
    generic.__module__ = __name__
    return generic


def _count_call(data):
    data.calls[0] += 1


def _direct(function, kernel_of, counted):
    """Type and lower a compiled call of ``function`` as a call of the kernel
    ``kernel_of(argument types)`` itself, as if the caller named it: the kernel is compiled
    (and cached) once per signature by its own dispatcher and linked into every caller.
    (An ``overload`` returning the kernel's Python function compiled a copy per dispatched
    name, uncached: BCFW's ``add_direction`` twice in a cold start, once in ``bcfw_steps``
    and once in ``weights_from_average``.) With ``counted`` (the position of the call's
    data), the call first adds one to its data's ``calls[0]``, code compiled into the
    caller (an inlined ``overload`` that counted, then called, was compiled on its own
    first, with the oracle under it: 0.4 s of BCFW's cold start, 1.3 s of SVRG's)."""

    class Call(AbstractTemplate):
        key = function

        def generic(self, args, kws):
            callee = self.context.resolve_value_type(kernel_of(args))
            return self.context.resolve_function_type(callee, args, kws)

    infer_global(function, types.Function(Call))

    @lower_builtin(function, types.VarArg(types.Any))
    def call(context, builder, sig, args):
        if counted is not None:
            context.compile_internal(builder, _count_call, types.none(sig.args[counted]),
                                     [args[counted]])
        callee = context.typing_context.resolve_value_type(kernel_of(sig.args))
        return context.get_function(callee, sig)(builder, args)


scratch = _dispatch("scratch")
scores = _dispatch("scores")
example_oracle = _dispatch("example_oracle")
add_direction = _dispatch("add_direction")
subtract_direction = _dispatch("subtract_direction")
direction_sqnorm = _dispatch("direction_sqnorm")
direction_dot = _dispatch("direction_dot")
decode = _dispatch("decode")
init_marginals = _dispatch("init_marginals")
dual_residual = _dispatch("dual_residual")
move_marginals = _dispatch("move_marginals")
weights_from_average = _dispatch("weights_from_average")
labeling_hinge = _dispatch("labeling_hinge")
add_labeling = _dispatch("add_labeling")
labeling_score = _dispatch("labeling_score")
labeling_direction = _dispatch("labeling_direction")
gram_scratch = _dispatch("gram_scratch")
direction_gram = _dispatch("direction_gram")
add_direction_scores = _dispatch("add_direction_scores")
example_features = _dispatch("example_features")
part_scores = _dispatch("part_scores")
marginals_scratch = _dispatch("marginals_scratch")
part_marginals = _dispatch("part_marginals")
expected_loss = _dispatch("expected_loss")
gold_marginals = _dispatch("gold_marginals")
store_marginals = _dispatch("store_marginals")


@nb.njit(cache=True)
def mean_hinge_and_gradient(w, dims, data, normalized, kind, K, mu, bufs, max_len, g):
    """``g = 1/n sum_i grad f_i(w)``; returns ``1/n sum_i f_i(w)`` (n oracle calls)."""
    n = len(data[0]) - 1
    U, _, y, R, E, _ = scratch(dims, data, max_len)
    no_U, no_C = np.empty((0, 0)), np.empty(0)
    g[:] = 0.0
    total = 0.0
    for i in range(n):
        T = scores(w, 1.0, dims, data, i, U)
        total += example_oracle(kind, K, mu, w, 1.0, dims, data, normalized, i, U, T, bufs, y,
                                R, E)
        add_direction(g, 1.0 / n, dims, data, data[0][i], T, R, E, no_U, no_C)
    return total / n
