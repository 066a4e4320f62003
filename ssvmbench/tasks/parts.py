"""A split's evaluation on the run's evaluation threads, in parts.

A task's evaluation kernel is compiled serial and without the GIL (``nogil=True``) and runs
over a contiguous part of the examples; :func:`in_parts` runs one part per evaluation thread
(``numba.get_num_threads()``, which a run sets to its share of the cores) on threads of this
process. That is the work numba's ``parallel=True`` loop over the examples did, split the
same way, without compiling a parallel kernel: numba's lowering of the loop took 2-3 s of
every cold start (docs/benchmarks.md, Cold start). Each example's numbers are its own and
the means are summed in example order (:func:`mean_in_order`), so nothing depends on the
number of threads.
"""

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np


def in_parts(kernel, offsets, *args):
    """``kernel(*args, first, last)`` over contiguous parts ``[first, last)`` of the
    examples, one per evaluation thread, the first on this thread; returns when every part
    is done (an exception raised in one is raised here). ``offsets`` (``n + 1``: example
    ``i`` is rows ``offsets[i]:offsets[i + 1]``, tokens or candidates) balances the parts'
    rows, which their work follows (OCR's training set, halved by examples: 22,566 and
    24,969 letters)."""
    n = len(offsets) - 1
    parts = max(1, min(numba.get_num_threads(), n))
    shares = offsets[0] + (offsets[-1] - offsets[0]) * np.arange(parts + 1) / parts
    bounds = np.searchsorted(offsets, shares).tolist()
    bounds[0], bounds[-1] = 0, n
    if parts == 1:
        kernel(*args, 0, n)
        return
    with ThreadPoolExecutor(parts - 1) as pool:
        others = [pool.submit(kernel, *args, bounds[part], bounds[part + 1])
                  for part in range(1, parts)]
        kernel(*args, bounds[0], bounds[1])
        for other in others:
            other.result()


def means(hinges, losses, with_hinge):
    """``(mean hinge, mean loss)`` of a split's per-example values, each summed in order
    (:func:`mean_in_order`); the hinge's NaN unless ``with_hinge``."""
    return mean_in_order(hinges) if with_hinge else np.nan, mean_in_order(losses)


def mean_in_order(values):
    """The mean of ``values`` summed left to right, as a serial loop sums them, to the bit
    (``np.add.accumulate`` adds in order; ``np.sum`` pairs the terms)."""
    return np.add.accumulate(values)[-1] / len(values)
