"""Penn Treebank POS: NLTK's WSJ sample against its counts, the .mrg reader, the LDC layout."""

import numpy as np
import pytest

from ssvmbench.common.errors import UserError
from ssvmbench.data import load_split, treebank

TREE = """( (S (NP-SBJ (NNP Pierre) (NNP Vinken) ) (VP (MD will) (VP (VB join)
  (NP (-NONE- *-1) ) ) ) (. .) ))
( (S (NP-SBJ (PRP He) ) (VP (VBZ is) ) (. .) ))
"""


def test_sample_counts_and_split(treebank_root):
    split = load_split("pos", root=str(treebank_root))
    assert split.train.n + split.test.n == 3914
    assert split.train.n_tokens + split.test.n_tokens == 94084      # -NONE- dropped
    assert (split.train.n, split.test.n) == (3396, 518)
    assert split.train.n_labels == 45 and split.metric == "accuracy"
    assert "NLTK 10% WSJ sample" in split.variant
    names = np.asarray(split.train.label_names)
    assert names[split.train.labels[:3]].tolist() == ["NNP", "NNP", ","]   # Pierre Vinken ,


def test_mrg_reader_drops_traces():
    sentences = treebank.read_mrg(TREE, "t.mrg")
    assert sentences == [[("Pierre", "NNP"), ("Vinken", "NNP"), ("will", "MD"),
                          ("join", "VB"), (".", ".")], [("He", "PRP"), ("is", "VBZ"), (".", ".")]]
    with pytest.raises(UserError, match=r"t.mrg: 2 bracket\(s\) left open"):
        treebank.read_mrg(TREE[:-4], "t.mrg")


def test_ldc_directory_layout(tmp_path):
    for section in ("00", "18", "20", "23"):
        (tmp_path / section).mkdir()
        (tmp_path / section / f"wsj_{section}01.mrg").write_text(TREE)
    split = load_split("wsjpos", ldc_dir=str(tmp_path),
                       features_spec={"window": ["word"], "radius": 1, "current": []})
    assert (split.train.n, split.test.n) == (4, 2)          # sections 00, 18 / 23 (20 = dev)
    assert "LDC WSJ treebank" in split.variant
    with pytest.raises(UserError, match="data.ldc_dir"):
        load_split("wsjpos")
