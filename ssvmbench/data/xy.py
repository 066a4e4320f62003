"""A dataset's split as ``(X, y)``, the form scikit-learn-style estimators take
(:mod:`ssvmbench.estimators.estimator`)."""

from ssvmbench.common.errors import UserError

SPLITS = ("train", "test")


def load_xy(name, split="train", subset=None, **options):
    """``(X, y)`` of the ``split`` (``"train"`` or ``"test"``) of dataset ``name``, loaded as
    ``data=NAME`` loads it (fetched first if it is not in the data root; ``options`` are the
    dataset's ``data.*`` settings, e.g. ``root``, ``fold``; ``subset``: the first fraction of
    the training sequences, as ``+data.subset``). Sequence labelling (OCR, CoNLL, POS, ...):
    ``X`` a list of per-sequence token feature matrices (scipy CSR, ``T_i x F``) and ``y`` a
    list of label arrays, as :class:`~ssvmbench.ChainSSVM` takes them. A split type gives
    this form through its ``xy()`` method (:meth:`ChainDataset.xy
    <ssvmbench.data.sequences.ChainDataset.xy>`; a plugin's split may have one too); data
    whose examples are not ``(x, y)`` pairs of that kind are refused in one line."""
    from ssvmbench.data import load_split

    if split not in SPLITS:
        raise UserError(f"load_xy: split={split!r}; choose one of {list(SPLITS)}")
    part = getattr(load_split(name, subset=subset, **options), split)
    if getattr(part, "xy", None) is None:
        raise UserError(f"load_xy: data={name} gives {type(part).__name__} splits, which "
                        "have no (X, y) form for an estimator; use ssvmbench.api.run")
    return part.xy()
