"""Chunk F1 against seqeval (a maintained conlleval implementation) on the same predictions."""

import numpy as np
import pytest
from seqeval.metrics import f1_score

from ssvmbench.metrics import chunk_f1, chunks

TAGS_IOB2 = ["O", "B-NP", "I-NP", "B-VP", "I-VP", "B-PP"]
TAGS_IOB1 = ["O", "I-PER", "I-ORG", "B-PER", "B-ORG"]


def test_chunks_follow_conlleval_rules():
    tags = ["B-NP", "I-NP", "O", "I-VP", "I-NP", "B-NP", "B-NP", "I-NP"]
    assert chunks(tags, [0, 8]) == {(0, 2, "NP"), (3, 4, "VP"), (4, 5, "NP"), (5, 6, "NP"),
                                    (6, 8, "NP")}
    assert chunks(["I-NP", "I-NP"], [0, 1, 2]) == {(0, 1, "NP"), (1, 2, "NP")}


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
