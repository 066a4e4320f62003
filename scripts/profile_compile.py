"""Where a run's first compile goes: the seconds numba spends compiling each kernel (its own
share, callees excluded, and with them) during the warm-up of ``ssvmbench run OVERRIDES``,
from numba's compile events. Run it on an empty cache to see a cold start:

    NUMBA_CACHE_DIR=$(mktemp -d) python scripts/profile_compile.py solver=bcfw data=ocr lambda=0.01

With two threads or more the checkpoint's kernels compile in a second process meanwhile
(:func:`ssvmbench.compiled.coldstart.checkpoint_compiler`), whose compile is not listed here; with
``NUMBA_NUM_THREADS=1`` every kernel compiles in this process and is listed.
"""

import sys
import time
from collections import defaultdict

from numba.core import event

from ssvmbench import api
from ssvmbench.run import runner
from ssvmbench.run.settings import read


class Timer(event.Listener):
    def __init__(self):
        self.stack, self.total, self.own = [], defaultdict(float), defaultdict(float)

    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        self.stack.append([f"{f.__module__}.{f.__name__}", time.perf_counter(), 0.0])

    def on_end(self, ev):
        name, start, children = self.stack.pop()
        seconds = time.perf_counter() - start
        self.total[name] += seconds
        self.own[name] += seconds - children
        if self.stack:
            self.stack[-1][2] += seconds


def main(overrides):
    settings = read(api.config(overrides))
    split, train, _ = runner.load_tasks(settings)
    lam, l1 = settings.objective.at(train.n)
    timer = Timer()
    with event.install_listener("numba:compile", timer):
        seconds = runner.warm_up(settings, split, lam, l1)
    print(f"warm-up {seconds:.1f} s; compiling {sum(timer.own.values()):.1f} s")
    print("  own s  with callees  kernel")
    for name, own in sorted(timer.own.items(), key=lambda item: -item[1])[:25]:
        print(f"{own:7.2f}  {timer.total[name]:12.2f}  {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
