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
# methods added beside a paper's (``reproduce --with``, ``plot --added``): colours no paper
# curve takes, a thicker line and their own marker, so that they stand out in every panel
ADDED_COLORS = ["black", "#e7298a", "#1b9e77", "#7570b3"]
ADDED_MARKER, ADDED_WIDTH = "8", 2.2
ITERATES = {"": "-", "wavg": "--", "avg": ":", "tavg": "-.", "best": (0, (5, 1, 1, 1))}
OTHER_DASHES = [(0, (3, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (5, 2)), (0, (2, 2, 6, 2)),
                (0, (8, 2, 2, 2))]


def solver_of(label):
    """The known solver a curve label starts with (the longest: ``sc_svrg`` before
    ``svrg``), or None."""
    return base_of(label, SOLVERS)


def base_of(label, bases):
    """The longest of ``bases`` that ``label`` is or starts with (``base-ITERATE``), or
    None."""
    return max((b for b in bases if label == b or label.startswith(b + "-")), key=len,
               default=None)


def curve_styles(labels, names=None, added=()):
    """``{label: matplotlib keyword arguments}`` for the curve labels ``labels`` (see
    :func:`~ssvmbench.plotting.curves.curve_labels`). ``names``: ``{label: the name it
    carries in the figure}`` (:func:`~ssvmbench.plotting.names.paper_names`); labels of one
    name are one legend entry and share its style. Every name gets its own colour (cycling
    only past the :data:`PALETTE`'s 20), its solver's marker and its variant's line style
    (unknown variants cycle through extra dash patterns); the returned order (by solver,
    plainest label first) is the legend's, and does not depend on the order of ``labels``.
    ``added``: the labels of added methods (their curves are ``LABEL`` and
    ``LABEL-ITERATE``): each takes one of :data:`ADDED_COLORS`, a thicker line and
    :data:`ADDED_MARKER` (its iterates apart by line style), after every paper curve in the
    legend."""
    names = names or {}
    groups = {}                                  # name -> its labels
    for label in sorted(set(labels)):
        groups.setdefault(names.get(label, label), []).append(label)
    def rank(name):       # by solver; within one, its plainest label (fewest settings) first
        first = groups[name][0]
        if base_of(first, added):
            return (len(SOLVERS) + 1, len(first), first)
        solver = solver_of(first)
        return (list(SOLVERS).index(solver) if solver else len(SOLVERS), len(first), first)
    order = sorted(groups, key=rank)
    colors, taken = {}, set()
    own = sorted(set(added))                     # an added method's curves: one colour
    for name in order:
        base = base_of(groups[name][0], added)
        if base:
            colors[name] = ADDED_COLORS[own.index(base) % len(ADDED_COLORS)]
    for name in order:                           # a solver's first curve: its own colour
        if name in colors:
            continue
        solver = solver_of(groups[name][0])
        if solver and SOLVERS[solver][0] not in taken:
            colors[name] = SOLVERS[solver][0]
            taken.add(colors[name])
    spare = itertools.cycle([color for color in PALETTE if color not in taken] or PALETTE)
    spare_dashes = itertools.cycle(OTHER_DASHES)
    variants, styles = {}, {}
    for name in order:
        first = groups[name][0]
        base = base_of(first, added)
        solver = base or solver_of(first)
        marker = ADDED_MARKER if base else SOLVERS[solver][1] if solver else "x"
        variant = first[len(solver) + 1:] if solver else ""
        dashes = (ITERATES[variant] if variant in ITERATES
                  else variants.setdefault((solver, variant), next(spare_dashes)))
        style = {"color": colors.get(name) or next(spare), "marker": marker,
                 "linestyle": dashes, "markevery": 0.2, "markersize": 4}
        if base:
            style.update(linewidth=ADDED_WIDTH, markersize=6)
        styles.update({label: style for label in groups[name]})
    return styles
