"""Chunk F1 against seqeval (a maintained conlleval implementation) on the same predictions."""

import numpy as np
import pytest
from helpers.reference import chunks_python
from seqeval.metrics import f1_score

from ssvmbench.tasks.metrics import chunk_f1, chunks, tag_f1
from ssvmbench.tasks.metrics import test_scores as scores_of

TAGS_IOB2 = ["O", "B-NP", "I-NP", "B-VP", "I-VP", "B-PP"]
TAGS_IOB1 = ["O", "I-PER", "I-ORG", "B-PER", "B-ORG"]


def test_chunks_follow_conlleval_rules():
    tags = ["B-NP", "I-NP", "O", "I-VP", "I-NP", "B-NP", "B-NP", "I-NP"]
    assert chunks(tags, [0, 8]) == {(0, 2, "NP"), (3, 4, "VP"), (4, 5, "NP"), (5, 6, "NP"),
                                    (6, 8, "NP")}
    assert chunks(["I-NP", "I-NP"], [0, 1, 2]) == {(0, 1, "NP"), (1, 2, "NP")}


@pytest.mark.parametrize("tags", [TAGS_IOB2, TAGS_IOB1 + ["E-X", "B", "I-"]])
@pytest.mark.parametrize("seed", range(5))
def test_compiled_chunks_equal_the_python_rules(tags, seed):
    """The compiled chunker finds exactly the chunks of the plain-Python conlleval rules
    (odd tags included: another prefix, no type, an empty type)."""
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(rng.integers(1, 12, size=60))])
    sequence = list(rng.choice(tags, size=offsets[-1]))
    assert chunks(sequence, offsets) == chunks_python(sequence, offsets)


def test_chunk_f1_of_real_predictions_is_the_python_value(data_root):
    """On CoNLL-2000's test split, with predictions of a trained model, the logged chunk F1
    equals the plain-Python computation bit for bit (issue 31: it was 0.13 s per call)."""
    from ssvmbench.data import load_split
    from ssvmbench.solvers import make_solver
    from ssvmbench.tasks import make_task
    split = load_split("conll2000", root=str(data_root))
    train, test = make_task(split.train.subset(range(500))), make_task(split.test)
    solver = make_solver("bcfw", train, 0.01, {}, 0)
    solver.run_until(2 * train.n)
    predictions = test.evaluate(solver.iterates()[0][1], with_hinge=False)[2]
    ds = test.dataset
    names = np.asarray(ds.label_names)
    gold_chunks = chunks_python(list(names[ds.labels]), ds.offsets)
    predicted_chunks = chunks_python(list(names[predictions]), ds.offsets)
    correct = len(gold_chunks & predicted_chunks)
    p, r = correct / len(predicted_chunks), correct / len(gold_chunks)
    assert 0.5 < scores_of(ds, predictions)["test_chunk_f1"] == 2 * p * r / (p + r)


@pytest.mark.parametrize("tags", [TAGS_IOB2, TAGS_IOB1])
@pytest.mark.parametrize("seed", range(5))
def test_f1_matches_seqeval(tags, seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 12, size=40)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    gold = list(rng.choice(tags, size=offsets[-1]))
    noisy = [t if rng.random() < 0.7 else rng.choice(tags) for t in gold]
    split = [list(x) for x in (gold, noisy)]
    sentences = [[seq[a:b] for a, b in zip(offsets[:-1], offsets[1:])] for seq in split]
    expected = f1_score(sentences[0], sentences[1])
    assert chunk_f1(gold, noisy, offsets) == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(5))
def test_tag_f1_matches_scikit_learn_weighted_f1_without_O(seed):
    """Casimir's NER F1: scikit-learn's support-weighted F1 over the tags other than O."""
    from sklearn.metrics import f1_score as sk_f1
    rng = np.random.default_rng(seed)
    gold = rng.choice(6, size=300, p=[0.6, 0.1, 0.1, 0.1, 0.05, 0.05])
    predicted = np.where(rng.random(300) < 0.7, gold, rng.integers(0, 6, size=300))
    predicted[predicted == 5] = 4            # tag 5 never predicted: its F1 is 0
    expected = sk_f1(gold, predicted, labels=[1, 2, 3, 4, 5], average="weighted",
                     zero_division=0)
    assert tag_f1(gold, predicted, 6, ignore=0) == pytest.approx(expected)
    assert tag_f1(gold, gold, 6, ignore=0) == 1.0


def test_every_applicable_metric_is_a_column():
    """A tagged chain split gets accuracy, chunk F1 and tag F1; OCR letters only accuracy."""
    from ssvmbench.data.sequences import ChainDataset
    from ssvmbench.tasks.metrics import test_scores

    def chain(names):
        return ChainDataset(name="t", n_labels=3, n_features=1, offsets=np.array([0, 3]),
                            labels=np.array([1, 2, 0], dtype=np.int32),
                            feat_ptr=np.zeros(4, dtype=np.int64),
                            feat_idx=np.zeros(0, dtype=np.int32), feat_val=np.zeros(0),
                            label_names=names)
    tagged = test_scores(chain(("O", "B-NP", "I-NP")), np.array([1, 2, 0]))
    assert tagged == {"test_accuracy": 1.0, "test_chunk_f1": 1.0, "test_tag_f1": 1.0}
    assert set(test_scores(chain(("a", "b", "c")), np.array([1, 1, 0]))) == {"test_accuracy"}
