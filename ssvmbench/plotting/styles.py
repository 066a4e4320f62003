"""The look of every curve in a figure: its own colour (no two curves of a figure share
one, so the K, mu or rho1 variants of one solver stay apart), the solver's marker and the
iterate's or variant's line style (``-wavg``, ``-best``, ``-rho1=0.9``, ...), so that the
solver stays recognisable and curves stay apart in grayscale prints too."""

import itertools

# the first curve of a solver takes its colour where it is free, so that BCFW is blue in
# most figures; the others take the free colours of PALETTE in order
SOLVERS = {"bcfw": ("C0", "o"), "ssg": ("C1", "s"), "fw": ("C2", "^"),
           "cutting_plane": ("C3", "v"), "online_eg": ("C4", "D"), "sgd": ("C5", "P"),
           "svrg": ("C6", "X"), "sc_svrg": ("C7", "*"), "sap": ("C8", "h"),
           "l1_subgradient": ("C9", "<")}
# tab10 (colour-blind-safe), then the dark colours of tab20b, then tab20's light ones
PALETTE = [f"C{i}" for i in range(10)] + [
    "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173",
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5"]
ITERATES = {"": "-", "wavg": "--", "avg": ":", "tavg": "-.", "best": (0, (5, 1, 1, 1))}
OTHER_DASHES = [(0, (3, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (5, 2)), (0, (2, 2, 6, 2)),
                (0, (8, 2, 2, 2))]


def solver_of(label):
    """The known solver a curve label starts with (the longest: ``sc_svrg`` before
    ``svrg``), or None."""
    return max((s for s in SOLVERS if label == s or label.startswith(s + "-")), key=len,
               default=None)


def curve_styles(labels, names=None):
    """``{label: matplotlib keyword arguments}`` for the curve labels ``labels`` (see
    :func:`~ssvmbench.plotting.curves.curve_labels`). ``names``: ``{label: the name it
    carries in the figure}`` (:func:`~ssvmbench.plotting.names.paper_names`); labels of one
    name are one legend entry and share its style. Every name gets its own colour (cycling
    only past the :data:`PALETTE`'s 20), its solver's marker and its variant's line style
    (unknown variants cycle through extra dash patterns); the returned order (by solver,
    plainest label first) is the legend's, and does not depend on the order of ``labels``."""
    names = names or {}
    groups = {}                                  # name -> its labels
    for label in sorted(set(labels)):
        groups.setdefault(names.get(label, label), []).append(label)
    def rank(name):       # by solver; within one, its plainest label (fewest settings) first
        first = groups[name][0]
        solver = solver_of(first)
        return (list(SOLVERS).index(solver) if solver else len(SOLVERS), len(first), first)
    order = sorted(groups, key=rank)
    colors, taken = {}, set()
    for name in order:                           # a solver's first curve: its own colour
        solver = solver_of(groups[name][0])
        if solver and SOLVERS[solver][0] not in taken:
            colors[name] = SOLVERS[solver][0]
            taken.add(colors[name])
    spare = itertools.cycle([color for color in PALETTE if color not in taken] or PALETTE)
    spare_dashes = itertools.cycle(OTHER_DASHES)
    variants, styles = {}, {}
    for name in order:
        first = groups[name][0]
        solver = solver_of(first)
        marker = SOLVERS[solver][1] if solver else "x"
        variant = first[len(solver) + 1:] if solver else ""
        dashes = (ITERATES[variant] if variant in ITERATES
                  else variants.setdefault((solver, variant), next(spare_dashes)))
        style = {"color": colors.get(name) or next(spare), "marker": marker,
                 "linestyle": dashes, "markevery": 0.2, "markersize": 4}
        styles.update({label: style for label in groups[name]})
    return styles
