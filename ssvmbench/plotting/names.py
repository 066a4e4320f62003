"""The names curves carry in figures: the paper's name of a method instead of our curve
label (``SC-SVRG-adapt`` for ``sc_svrg-average-extrapolation-expo-lr=0.02-topk-K5-mu2-
ties=casimir``), from a preset's ``names`` (``plot --names PRESET``), and the table that
says which runs and settings are behind each name.

``names`` (read by :func:`ssvmbench.papers.presets.load_names`, checked by
:func:`check_names`) maps a curve label, or a pattern of one, to a name: ``{key}`` in a
pattern matches any text and the name may repeat it (``sc_svrg-...-K{K}-mu2-ties=casimir:
SC-SVRG-adapt K={K}``); the first pattern that matches a whole label names it, and a label no
pattern matches keeps its own name. Curves that share a panel never share a name: the settings that
tell them apart are added to it (``SAP rho1=0.9``). The names only label the drawing; the curves
stay what checks and ``--methods`` name by their labels.
"""

import re

import pandas as pd

from ssvmbench.common.errors import UserError
from ssvmbench.plotting.curves import PANEL
from ssvmbench.plotting.styles import curve_styles
from ssvmbench.run.runlog import override_key, setting_words

NAME_KEY = re.compile(r"\{(\w+)\}")   # {key} in a names pattern: any text

# the settings in a curve label: split at "-" that does not start a number ("1e-08" stays)
_SETTING = re.compile(r"-(?![\d.])")


def _regex(pattern):
    parts = NAME_KEY.split(pattern)             # text, key, text, key, ...
    return re.compile("".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)"
                              for i, part in enumerate(parts)))


def name_of(label, names):
    """The name of the curve ``label`` under ``names`` (the first pattern matching all of
    it, its ``{key}`` filled in), or the label itself."""
    for pattern, name in names.items():
        match = _regex(pattern).fullmatch(label)
        if match:
            return NAME_KEY.sub(lambda key: match.group(key.group(1)), name)
    return label


def paper_names(labels, names=None, panels=(), own=()):
    """``{label: name}`` for the curve labels ``labels`` under ``names``; ``panels``: sets
    of labels drawn in one panel, whose names are made different by adding the settings
    of their labels that differ (:func:`settings_apart`); the labels ``own`` (an added
    method's curves) keep their own name."""
    named = {label: label if label in own else name_of(label, names or {}) for label in labels}
    for panel in panels:
        by_name = {}
        for label in sorted(panel):
            by_name.setdefault(named[label], []).append(label)
        for name, same in by_name.items():
            if len(same) > 1:
                apart = settings_apart(same)
                named.update({label: f"{name} {apart[label]}".strip() for label in same})
    return named


def figure_names(stats, names, own=()):
    """``{label: name}`` of the curves in ``stats`` (:func:`~ssvmbench.plotting.curves.
    aggregate` tables, one per figure of a plot) under ``names``, curves that share a panel
    kept apart; the labels ``own`` keep their own name (:func:`paper_names`)."""
    curves = pd.concat([table[PANEL + ["method"]] for table in stats])
    return paper_names(curves["method"].unique(), names,
                       [set(panel) for _, panel in curves.groupby(PANEL, dropna=False)["method"]],
                       own)


def settings_apart(labels):
    """``{label: the settings of its label the other labels lack}`` (``rho1=0.9`` of
    ``sap-rho1=0.9`` beside ``sap-rho1=0.1``)."""
    settings = {label: _SETTING.split(label) for label in labels}
    common = set.intersection(*(set(parts) for parts in settings.values()))
    return {label: " ".join(part for part in parts if part not in common) or label
            for label, parts in settings.items()}


def curves_table(df, named, added=()):
    """Per name in the figure (in the legend's order), the curve labels behind it, their
    runs and the settings they share (the command-line overrides common to their runs,
    seed aside: what differs between the runs of a curve, such as its panel's lambda,
    drops out). ``df``: the plotted rows, ``method`` the curve label; ``named``:
    :func:`paper_names`; ``added``: the added methods' labels (their own look, last)."""
    rows = []
    for label, runs in df.drop_duplicates(["run", "method"]).groupby("method"):
        listed = [_overrides(text) for text in runs.get("overrides", pd.Series()).dropna()]
        shared = [word for word in listed[0] if all(word in other for other in listed)
                  ] if listed else []
        seeds = runs["seed"].nunique() if "seed" in runs else 1
        rows.append({"in the figure": named.get(label, label), "our curve": label,
                     "runs": f"{len(runs)} ({seeds} seed{'s' * (seeds != 1)})",
                     "settings": " ".join(shared)})
    table = pd.DataFrame(rows, columns=["in the figure", "our curve", "runs", "settings"])
    legend = list(curve_styles(table["our curve"], named, added))   # the legend's order
    return table.sort_values("our curve", key=lambda labels: labels.map(legend.index)
                             ).reset_index(drop=True)


def _overrides(text):
    """A run's settings (:func:`runlog.setting_words`) without its seed and Hydra's own."""
    return [word for word in setting_words(text)
            if override_key(word) != "seed" and not override_key(word).startswith("hydra.")]


def check_names(names, where):
    """``names`` if it maps strings to strings, each name's ``{key}`` one its pattern has;
    otherwise one clear error naming ``where``."""
    if not isinstance(names, dict):
        raise UserError(f"{where}: names must map curve labels (or patterns with {{key}}) to "
                        "the names the figures show, e.g. bcfw-wavg: BCFW-wavg")
    for pattern, name in names.items():
        if not (isinstance(pattern, str) and isinstance(name, str)):
            raise UserError(f"{where}: names: {pattern!r}: {name!r}: give text on both sides")
        keys = NAME_KEY.findall(pattern)
        if len(keys) != len(set(keys)):
            raise UserError(f"{where}: names: {pattern!r} uses a {{key}} twice; give each "
                            "part of the label its own key")
        missing = set(NAME_KEY.findall(name)) - set(keys)
        if missing:
            raise UserError(f"{where}: names: {name!r} uses {{{', '.join(sorted(missing))}}}, "
                            f"which its pattern {pattern!r} does not match")
    return names
