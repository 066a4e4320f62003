"""Log-axis ticks in one style: ``10^k`` at the decades and ``c x 10^k`` between them, at
least two labelled in every panel (the short ranges of a converged objective too), and on
the interactive pages' x axes at least three (a 5-pass axis: 1, 2, 5)."""

import math

import numpy as np
from matplotlib import ticker

# the coefficients c of the labelled ticks c x 10^k, fewest first: decades only while two
# are in view, then 1, 2, 5, then every integer
COEFFICIENTS = ({1}, {1, 2, 5}, set(range(1, 10)))


def log_ticks(axis):
    """Give the log ``axis`` (``ax.xaxis`` / ``ax.yaxis``) its ticks: matplotlib's
    :class:`~matplotlib.ticker.LogLocator` (decades; minor ticks at 2..9, linear ticks
    where fewer than two fit) labelled by :class:`LogLabels`."""
    axis.set_major_locator(ticker.LogLocator(base=10))
    axis.set_minor_locator(ticker.LogLocator(base=10, subs=np.arange(2, 10)))
    axis.set_major_formatter(LogLabels())
    axis.set_minor_formatter(LogLabels())


def _split(x):
    """``(c, k)`` with ``x = c 10^k`` for an integer ``c`` in 1..9, else None."""
    if not (x > 0 and math.isfinite(x)):
        return None
    k = math.floor(math.log10(x) + 1e-9)
    c = x / 10.0 ** k
    return (round(c), k) if abs(c - round(c)) < 1e-6 * c and 1 <= round(c) <= 9 else None


def labelled(vmin, vmax, least=2):
    """The coefficients to label on a log axis from ``vmin`` to ``vmax``: the first of
    :data:`COEFFICIENTS` with ``least`` ticks in view, or None (label the linear ticks)."""
    vmin, vmax = sorted((vmin, vmax))
    if not vmin > 0:
        return COEFFICIENTS[0]
    decades = range(math.floor(math.log10(vmin)), math.ceil(math.log10(vmax)) + 1)
    for coefficients in COEFFICIENTS:
        ticks = [c * 10.0 ** k for k in decades for c in coefficients]
        if sum(vmin * (1 - 1e-9) <= t <= vmax * (1 + 1e-9) for t in ticks) >= least:
            return coefficients
    return None


# Plotly's log-axis ``dtick`` per set of coefficients: decades, then 1-2-5, then every digit
PLOTLY_DTICKS = {1: 1, 3: "D2", 9: "D1"}


def plotly_dtick(vmin, vmax):
    """The ``dtick`` of a Plotly log axis from ``vmin`` to ``vmax`` that labels at least
    three ticks (:func:`labelled`); ``"D1"`` (every digit) where even those are fewer."""
    coefficients = labelled(vmin, vmax, least=3)
    return PLOTLY_DTICKS[len(coefficients) if coefficients else 9]


class LogLabels(ticker.Formatter):
    """``$10^{k}$`` and ``$c\\times10^{k}$`` for the ticks whose ``c`` :func:`labelled`
    picks for the axis's view, the others blank; where it picks none (less than a factor
    of two in view), every tick as a plain number."""

    def __call__(self, x, pos=None):
        coefficients = labelled(*self.axis.get_view_interval())
        if coefficients is None:
            return f"{x:.3g}"
        split = _split(x)
        if split is None or split[0] not in coefficients:
            return ""
        c, k = split
        return f"$10^{{{k}}}$" if c == 1 else f"${c}\\times10^{{{k}}}$"
