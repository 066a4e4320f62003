"""Test metrics beyond the task loss: token accuracy, chunk / entity F1 with the semantics of
the CoNLL ``conlleval`` script (IOB1 and IOB2 tags), the PASCAL VOC 2007 average
precision of box localization and the alignment error rate of word alignment."""

import numpy as np

from ssvmbench.errors import UserError


def chunks(tags, offsets):
    """The set of chunks ``(start, end, type)`` of a tag sequence (conlleval's
    startOfChunk / endOfChunk rules for ``B-``/``I-``/``O``; sentences end chunks)."""
    found = set()
    for s in range(len(offsets) - 1):
        start, kind = None, None
        for t in range(offsets[s], offsets[s + 1] + 1):
            tag = tags[t] if t < offsets[s + 1] else "O"
            prefix, _, typ = tag.partition("-")
            begins = prefix == "B" or (prefix == "I" and typ != kind)
            if kind is not None and (prefix == "O" or begins):
                found.add((start, t, kind))
                kind = None
            if prefix != "O" and (begins or kind is None):
                start, kind = t, typ
    return found


def chunk_f1(gold, predicted, offsets):
    """F1 of predicted chunks against gold chunks (exact start, end and type)."""
    gold_chunks, predicted_chunks = chunks(gold, offsets), chunks(predicted, offsets)
    correct = len(gold_chunks & predicted_chunks)
    if correct == 0:
        return 0.0
    precision, recall = correct / len(predicted_chunks), correct / len(gold_chunks)
    return 2 * precision * recall / (precision + recall)


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


def test_metric(name, dataset, predictions):
    """The metric a split is scored with (``SplitData.metric``)."""
    if name == "accuracy":
        return float(np.mean(predictions == dataset.labels))
    if name == "chunk_f1":
        names = np.asarray(dataset.label_names)
        return chunk_f1(names[dataset.labels], names[predictions], dataset.offsets)
    if name == "ap":       # box localization: each image's top box, one object per image
        chosen, score = predictions
        correct = dataset.iou[dataset.offsets[:-1] + chosen] >= 0.5
        return voc07_average_precision(correct, score, dataset.n)
    if name == "one_minus_aer":  # word alignment: 1 - AER, so that higher is better
        return 1.0 - alignment_error_rate(predictions, dataset.sure, dataset.possible)
    raise UserError(f"unknown metric '{name}': choose accuracy, chunk_f1, ap or one_minus_aer")
