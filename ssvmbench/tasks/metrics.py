"""Test metrics beyond the task loss, one registry (:data:`METRICS`): token accuracy (SAP
Tables II-IV), chunk / entity F1 with the semantics of the CoNLL ``conlleval`` script (IOB1
and IOB2 tags; BCFW Figure 1e), the support-weighted token F1 without ``O`` of the Casimir
authors' NER evaluation, the PASCAL VOC 2007 average precision of box localization (Casimir
Figure 2b) and the alignment error rate of word alignment (BCFW Figure 5), plus the
:class:`Metric` objects other packages register under the entry-point group
``ssvmbench.metrics``. A run logs every metric that applies to its data, each as column
``test_<name>``."""

from dataclasses import dataclass
from functools import cache
from typing import Callable

import numba as nb
import numpy as np

from ssvmbench.common import plugins
from ssvmbench.common.errors import UserError
from ssvmbench.data.boxes import BoxDataset
from ssvmbench.data.matchings import MatchingDataset
from ssvmbench.data.sequences import ChainDataset

_PREFIXES = {"O": 0, "B": 1, "I": 2}     # any other prefix: 3


@cache
def _tag_codes(names):
    """``(prefix, type, type names)`` of the tags ``names`` (a tuple): prefix code 0 ``O``,
    1 ``B-``, 2 ``I-``, 3 other, and the index of the type after the ``-``."""
    types = {}
    prefix = np.empty(len(names), dtype=np.int64)
    kind = np.empty(len(names), dtype=np.int64)
    for k, name in enumerate(names):
        head, _, typ = str(name).partition("-")
        prefix[k] = _PREFIXES.get(head, 3)
        kind[k] = types.setdefault(typ, len(types))
    return prefix, kind, tuple(types)


@nb.njit(cache=True)
def _chunk_keys(prefix, kind, tags, offsets, n_types):
    """The chunks of the tag codes ``tags`` as keys ``(start * (N + 1) + end) * n_types +
    type`` (conlleval's startOfChunk / endOfChunk rules for ``B-``/``I-``/``O``; sentences
    end chunks), in order."""
    N = len(tags)
    keys = np.empty(N, dtype=np.int64)
    m = 0
    for s in range(len(offsets) - 1):
        start, current = 0, -1
        for t in range(offsets[s], offsets[s + 1] + 1):
            p, k = (prefix[tags[t]], kind[tags[t]]) if t < offsets[s + 1] else (0, -2)
            begins = p == 1 or (p == 2 and k != current)
            if current != -1 and (p == 0 or begins):
                keys[m] = (start * (N + 1) + t) * n_types + current
                m += 1
                current = -1
            if p != 0 and (begins or current == -1):
                start, current = t, k
    return keys[:m]


def _string_chunk_keys(sequences, offsets):
    """The chunk keys of each tag-name sequence of ``sequences`` (one tag table for all of
    them) and the type names."""
    arrays = [np.asarray(tags, dtype=str) for tags in sequences]
    names, codes = np.unique(np.concatenate(arrays), return_inverse=True)
    prefix, kind, types = _tag_codes(tuple(names))
    offsets = np.asarray(offsets, dtype=np.int64)
    bounds = np.cumsum([0] + [len(a) for a in arrays])
    return [_chunk_keys(prefix, kind, codes[a:b], offsets, len(types))
            for a, b in zip(bounds[:-1], bounds[1:])], types


def chunks(tags, offsets):
    """The set of chunks ``(start, end, type)`` of a tag sequence (:func:`_chunk_keys`)."""
    (keys,), types = _string_chunk_keys([tags], offsets)
    N = len(tags)
    return {(int(key // len(types) // (N + 1)), int(key // len(types) % (N + 1)),
             types[key % len(types)]) for key in keys}


@nb.njit(cache=True)
def _common(a, b):
    """Entries in both of the increasing arrays ``a`` and ``b`` (one merge, no sort)."""
    i = j = count = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            count += 1
            i += 1
            j += 1
        elif a[i] < b[j]:
            i += 1
        else:
            j += 1
    return count


def _f1(gold_keys, predicted_keys):
    """F1 of two sets of chunk keys, each increasing (:func:`_chunk_keys` makes them in
    order of start)."""
    correct = _common(gold_keys, predicted_keys)
    if correct == 0:
        return 0.0
    precision, recall = correct / len(predicted_keys), correct / len(gold_keys)
    return 2 * precision * recall / (precision + recall)


def chunk_f1(gold, predicted, offsets):
    """F1 of predicted chunks against gold chunks (exact start, end and type)."""
    return _f1(*_string_chunk_keys([gold, predicted], offsets)[0])


def voc07_average_precision(correct, confidence, n_objects):
    """Average precision with the VOC 2007 definition (Everingham et al. 2010, Section 4.2;
    the devkit's 11-point interpolation): detections ranked by ``confidence``, ``correct``
    when IoU >= 0.5 with a ground-truth object, ``AP = 1/11 sum_{r in 0, 0.1, ..., 1}
    max_{recall >= r} precision`` (0 where that recall is never reached)."""
    order = np.argsort(-np.asarray(confidence), kind="stable")
    hits = np.asarray(correct, dtype=float)[order]
    tp = np.cumsum(hits)
    precision = tp / np.arange(1, len(hits) + 1)
    recall = tp / n_objects
    return float(np.mean([precision[recall >= r].max(initial=0.0)
                          for r in np.linspace(0, 1, 11)]))


def alignment_error_rate(predicted, sure, possible):
    """AER (Och & Ney 2003; the test error of BCFW Appendix F's matching task, as in Taskar
    et al. 2006): ``1 - (|A & S| + |A & P|) / (|A| + |S|)`` for predicted links ``A``, Sure
    links ``S`` and Possible links ``P`` with ``S`` within ``P`` (``P`` is taken as
    ``possible | sure``), all given as boolean indicators over the same candidate links
    (summed over a whole split). 0 when there is nothing to predict and nothing predicted."""
    A, S = np.asarray(predicted, bool), np.asarray(sure, bool)
    P = np.asarray(possible, bool) | S
    total = A.sum() + S.sum()
    return float(1.0 - ((A & S).sum() + (A & P).sum()) / total) if total else 0.0


def tag_f1(gold, predicted, n_labels, ignore):
    """Token-level F1 per tag, averaged with weights = the tag's support (its gold count),
    over the tags other than ``ignore`` (``O`` for NER): scikit-learn's ``f1_score(gold,
    predicted, labels=[tags but O], average="weighted")``, the F1 of the Casimir authors'
    NER ``evaluation_function`` (``casimir/data/named_entity_recognition/
    incremental_first_order_oracle.py``). A tag never predicted nor present scores 0."""
    gold, predicted = np.asarray(gold), np.asarray(predicted)
    tags = np.array([t for t in range(n_labels) if t != ignore])
    support = np.bincount(gold, minlength=n_labels)[tags].astype(float)
    if support.sum() == 0:
        return 0.0
    hits = np.bincount(gold[gold == predicted], minlength=n_labels)[tags]
    guessed = np.bincount(predicted, minlength=n_labels)[tags]
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(support + guessed > 0, 2.0 * hits / (support + guessed), 0.0)
    return float(f1 @ support / support.sum())


@dataclass(frozen=True)
class Metric:
    """A test metric (higher is better), logged at every checkpoint as column
    ``test_<name>`` for every split it ``applies`` to."""

    name: str
    label: str                      # axis label / table heading
    score: Callable                 # (dataset, predictions) -> float
    applies: Callable               # (dataset) -> bool

    @property
    def column(self):
        return f"test_{self.name}"


def _chain(dataset):
    return isinstance(dataset, ChainDataset)


def _tagged(dataset):
    """Chunk and entity tags (IOB1 / IOB2 with an ``O`` tag): CoNLL-2000, CoNLL-2003."""
    return _chain(dataset) and "O" in dataset.label_names


def _chunk_f1(dataset, predictions):
    prefix, kind, types = _tag_codes(tuple(dataset.label_names))
    offsets = np.asarray(dataset.offsets, dtype=np.int64)
    return _f1(*(_chunk_keys(prefix, kind, np.asarray(tags, dtype=np.int64), offsets,
                             len(types)) for tags in (dataset.labels, predictions)))


def _tag_f1(dataset, predictions):
    return tag_f1(dataset.labels, predictions, dataset.n_labels,
                  list(dataset.label_names).index("O"))


def _ap(dataset, predictions):       # box localization: each image's top box, one object
    chosen, score = predictions
    correct = dataset.iou[dataset.offsets[:-1] + chosen] >= 0.5
    return voc07_average_precision(correct, score, dataset.n)


def _one_minus_aer(dataset, predictions):  # 1 - AER, so that higher is better
    return 1.0 - alignment_error_rate(predictions, dataset.sure, dataset.possible)


METRICS = {m.name: m for m in (
    Metric("accuracy", "test token accuracy",
           lambda ds, pred: float(np.mean(pred == ds.labels)), _chain),
    Metric("chunk_f1", "test chunk / entity F1 (conlleval)", _chunk_f1, _tagged),
    Metric("tag_f1", "test token F1 without O, support-weighted (Casimir)", _tag_f1, _tagged),
    Metric("ap", "test AP (VOC 2007)", _ap, lambda ds: isinstance(ds, BoxDataset)),
    Metric("one_minus_aer", "test 1 - AER", _one_minus_aer,
           lambda ds: isinstance(ds, MatchingDataset)),
)}


@cache
def registered():
    """``{name: Metric}``: the built-in metrics and those of the installed plugins."""
    return {**METRICS, **plugins.load(
        "ssvmbench.metrics", "metric", METRICS,
        lambda m: None if isinstance(m, Metric) else "is not a ssvmbench.tasks.metrics.Metric",
        lambda m: m.name)}


def metric(name):
    """The registered metric ``name``; unknown names are refused with the list."""
    if name not in registered():
        raise UserError(f"unknown metric '{name}': choose one of {sorted(registered())}")
    return registered()[name]


def metrics_for(dataset):
    """The metrics that apply to a split (each logged as its own column)."""
    return [m for m in registered().values() if m.applies(dataset)]


def check_split_metric(split, task):
    """Refuse, before any training, a split whose default metric (``split.metric``, the log's
    ``test_metric``) does not apply to its test data (``task``: the task's description, for
    the message)."""
    names = [m.name for m in metrics_for(split.test)]
    if split.metric not in names:
        raise UserError(f"data={split.test.name}: its loader names the test metric "
                        f"{split.metric!r}, which does not apply to its test split ({task}); "
                        f"metrics that apply: {names or 'none'}: set SplitData(metric=...) to "
                        "one of them, or register a metric for this data (entry point "
                        "ssvmbench.metrics)")


def test_scores(dataset, predictions):
    """``{test_<name>: value}`` of every metric that applies to ``dataset``."""
    return {m.column: m.score(dataset, predictions) for m in metrics_for(dataset)}
