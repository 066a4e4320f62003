"""One look per curve across every figure: the solver fixes the colour and the marker, the
iterate or variant (``-wavg``, ``-best``, ``-predefined``, ``-rho1=0.9``, ...) the line
style, so that curves stay apart in grayscale prints too."""

import itertools

# colour-blind-safe tab10 colours, one per solver; markers tell them apart in grayscale
SOLVERS = {"bcfw": ("C0", "o"), "ssg": ("C1", "s"), "fw": ("C2", "^"),
           "cutting_plane": ("C3", "v"), "online_eg": ("C4", "D"), "sgd": ("C5", "P"),
           "svrg": ("C6", "X"), "sc_svrg": ("C7", "*"), "sap": ("C8", "h"),
           "l1_subgradient": ("C9", "<")}
ITERATES = {"": "-", "wavg": "--", "avg": ":", "tavg": "-.", "best": (0, (5, 1, 1, 1))}
OTHER_DASHES = [(0, (3, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (5, 2)), (0, (2, 2, 6, 2)),
                (0, (8, 2, 2, 2))]


def curve_styles(labels):
    """``{label: matplotlib keyword arguments}`` for the curve names ``labels`` (see
    :func:`~ssvmbench.plotting.curves.curve_labels`); labels of unknown solvers cycle
    through the remaining colours, unknown variants through extra dash patterns (in sorted
    order, so a figure's styles do not depend on the order its logs were read)."""
    spare_colors = itertools.cycle(["0.3", "0.55", "C7"])
    spare_dashes = itertools.cycle(OTHER_DASHES)
    variants = {}
    styles = {}
    for label in sorted(labels):
        solver = max((s for s in SOLVERS if label == s or label.startswith(s + "-")),
                     key=len, default=None)
        color, marker = SOLVERS[solver] if solver else (next(spare_colors), "x")
        variant = label[len(solver) + 1:] if solver else ""
        if variant in ITERATES:
            dashes = ITERATES[variant]
        else:
            dashes = variants.setdefault(variant, next(spare_dashes))
        styles[label] = {"color": color, "marker": marker, "linestyle": dashes,
                         "markevery": 0.2, "markersize": 4}
    return styles
