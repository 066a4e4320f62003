"""CoNLL-2000 reader against the published counts, feature extraction and its cache."""

import os
import zipfile

import numpy as np
import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from ssvmbench.common.errors import UserError
from ssvmbench.common.paths import config_dir
from ssvmbench.data import conll, features, load_split
from ssvmbench.run.runlog import read_log


@pytest.fixture(scope="module")
def conll2000(conll2000_root):
    return load_split("conll2000", root=str(conll2000_root))


def test_counts_tags_and_dimension(conll2000):
    train, test = conll2000.train, conll2000.test
    assert (train.n, train.n_tokens) == (8936, 211727)
    assert (test.n, test.n_tokens) == (2012, 47377)
    assert train.n_labels == 23 and len(np.unique(train.labels)) == 22
    assert len(np.unique(test.labels)) == 19
    d = train.n_features * 23 + 23 * 23 + 2 * 23
    assert d >= 1_600_000                       # BCFW reports d = 1,643,026
    assert conll2000.metric == "chunk_f1"
    rows = np.diff(train.feat_ptr)
    assert rows.min() >= 1 + 10                 # bias + word/pos at 5 window positions
    assert np.all(test.feat_idx < train.n_features)


def test_first_sentence(conll2000):
    train = conll2000.train
    names = [train.label_names[k] for k in train.labels[:5]]
    assert names == ["B-NP", "B-PP", "B-NP", "I-NP", "B-VP"]   # Confidence in the pound is


def test_bad_line_names_file_and_line():
    text = "He PRP B-NP\nruns VBZ B-VP\n\nbad line\n"
    with pytest.raises(UserError, match="x.txt, line 4: expected 3 columns"):
        conll.read_columns(text, "x.txt", ("word", "pos", "chunk"), 2, set(conll.CHUNK_TAGS))
    with pytest.raises(UserError, match="line 2: unknown tag 'B-XX'"):
        conll.read_columns("a DT B-NP\nb NN B-XX\n", "x.txt", ("word", "pos", "chunk"), 2,
                           set(conll.CHUNK_TAGS))


def tiny():
    text = "The DT B-NP\ncat NN I-NP\nsat VBD B-VP\n\nA DT B-NP\ndog NN I-NP\n"
    return conll.read_columns(text, "t", ("word", "pos", "chunk"), 2, set(conll.CHUNK_TAGS))


def test_window_features_stay_inside_sentences():
    spec = {"window": ["word"], "radius": 1, "current": ["shape"]}
    tokens, names = features.token_strings(tiny(), spec)
    of_token = {t: set(names[tokens == t]) for t in range(5)}
    assert of_token[2] == {"bias", "word[-1]=cat", "word[0]=sat", "word[1]=</s>",
                           "shape[0]=x"}
    assert "word[-1]=<s>" in of_token[3] and "shape[0]=X" in of_token[3]
    assert "shape[0]=Xx" in of_token[0]


@pytest.mark.parametrize("mode", ["dictionary", "hashing"])
def test_encoding_modes(mode):
    spec = {"window": ["word", "pos"], "radius": 1, "current": [], "mode": mode,
            "hash_bits": 10}
    (ptr, idx, val), (test_ptr, test_idx, _), n_features = features.encode(tiny(), tiny(), spec)
    assert len(ptr) == 6 and np.all(np.diff(ptr) == 7)          # bias + 2 x 3 positions
    np.testing.assert_array_equal(idx, test_idx)
    assert n_features == (1024 if mode == "hashing" else len(np.unique(idx)))
    rows = np.split(idx, ptr[1:-1])
    assert all(np.all(np.diff(r) > 0) for r in rows)


def test_feature_cache_is_reused_and_keyed_by_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("SSVMBENCH_CACHE_DIR", str(tmp_path))
    calls = []

    def compute():
        calls.append(1)
        return {"x": np.arange(3)}
    for key in (["a", {"radius": 2}], ["a", {"radius": 2}], ["a", {"radius": 1}]):
        np.testing.assert_array_equal(features.cached(key, compute)["x"], np.arange(3))
    assert len(calls) == 2 and len(os.listdir(tmp_path / "features")) == 2


@pytest.mark.parametrize("test_split,counts", [("testb", (3453, 46435)), ("testa", (3250, 51362))])
def test_conll2003_counts_without_document_lines(conll2003_root, test_split, counts):
    split = load_split("conll2003", root=str(conll2003_root), test_split=test_split)
    assert (split.train.n, split.train.n_tokens) == (14041, 203621)
    assert (split.test.n, split.test.n_tokens) == counts
    assert split.train.n_labels == 9 and split.metric == "chunk_f1"
    names = np.asarray(split.train.label_names)[split.train.labels]
    assert "B-PER" not in set(names) and (names != "O").sum() > 30000
    with pytest.raises(UserError, match="data.test_split=dev"):
        load_split("conll2003", root=str(conll2003_root), test_split="dev")


@pytest.mark.parametrize("config,defaults", [("conll2000", conll.DEFAULT_FEATURES),
                                             ("conll2003", conll.NER_FEATURES)])
def test_config_templates_agree_with_the_loader_defaults(config, defaults):
    spec = yaml.safe_load((config_dir() / "data" / f"{config}.yaml").read_text())
    assert spec["features_spec"] == defaults


def test_sap_scale_config_reuses_the_conll2000_loader():
    with initialize_config_dir(config_dir=str(config_dir()), version_base=None):
        cfg = compose(config_name="config", overrides=["data=conll2000_sap"])
    spec = OmegaConf.to_container(cfg.data.features_spec)
    assert cfg.data.name == "conll2000" and cfg.data.download
    assert spec["mode"] == "dictionary" and len(spec["conjunctions"]) >= 10
    assert len(features.templates(spec)) > len(features.templates(conll.DEFAULT_FEATURES))


def test_label_column_cannot_be_a_feature():
    tables = {"train": tiny(), "test": tiny()}
    spec = {**conll.DEFAULT_FEATURES, "conjunctions": ["word[0]|chunk[-1]"]}
    with pytest.raises(UserError, match="uses 'chunk', the label column of conll2000"):
        conll.build_split("conll2000", tables, ("word", "pos", "chunk"), conll.CHUNK_TAGS, spec,
                          "x", "x", "x")


def test_specs_without_conjunctions_keep_their_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SSVMBENCH_CACHE_DIR", str(tmp_path))
    tables = {"train": tiny(), "test": tiny()}
    spec = {key: value for key, value in conll.DEFAULT_FEATURES.items() if key != "conjunctions"}
    for with_empty in (False, True, False):
        conll.build_split("conll2000", tables, ("word", "pos", "chunk"), conll.CHUNK_TAGS,
                          {**spec, "conjunctions": []} if with_empty else spec, "x", "x", "x")
    assert len(os.listdir(tmp_path / "features")) == 1
    conll.build_split("conll2000", tables, ("word", "pos", "chunk"), conll.CHUNK_TAGS,
                      {**spec, "conjunctions": ["pos[-1]|pos[0]"]}, "x", "x", "x")
    assert len(os.listdir(tmp_path / "features")) == 2


@pytest.fixture(scope="module")
def conll2002_files(conll2002_root, tmp_path_factory):
    """The CoNLL-2002 members extracted, as a user would have them."""
    folder = tmp_path_factory.mktemp("conll2002")
    with zipfile.ZipFile(conll2002_root / "conll2002" / "conll2002.zip") as archive:
        archive.extractall(folder)
    return folder / "conll2002"


@pytest.mark.parametrize("lang, counts", [
    ("esp", {"train": (8323, 264715), "test": (1517, 51533)}),
    # ned: the README's token counts include 287 and 119 -DOCSTART- lines, dropped here
    ("ned", {"train": (15806, 202931 - 287), "test": (5195, 68994 - 119)}),
])
def test_conll_files_reads_conll2002_spanish_and_dutch(conll2002_files, lang, counts):
    split = load_split("conll_files", train=str(conll2002_files / f"{lang}.train"),
                       test=str(conll2002_files / f"{lang}.testb"),
                       columns=["word", "pos", "ner"], tag_scheme="iob2", features_spec={})
    for name, dataset in (("train", split.train), ("test", split.test)):
        assert (dataset.n, dataset.n_tokens) == counts[name]
    assert split.train.label_names == ("O", "B-LOC", "B-MISC", "B-ORG", "B-PER", "I-LOC",
                                       "I-MISC", "I-ORG", "I-PER")
    assert split.metric == "chunk_f1"


def test_conll_files_trains_and_evaluates_from_the_command_line(conll2002_files, tmp_path):
    from helpers.cli import ssvmbench
    run_dir = tmp_path / "run"
    ssvmbench("run", "solver=bcfw", "data=conll_files",
              f"data.train={conll2002_files / 'esp.train'}",
              f"data.test={conll2002_files / 'esp.testb'}", "+data.subset=0.1",
              "data.metric=tag_f1", "lambda=0.01", "solver.passes=2",
              f"hydra.run.dir={run_dir}", cwd=tmp_path)
    trace, attrs = read_log(run_dir / "run.h5")
    assert attrs["status"] == "finished" and attrs["n"] == 832
    assert trace["test_chunk_f1"].iloc[-1] > 0.3 and trace["test_accuracy"].iloc[-1] > 0.85
    assert attrs["test_metric"] == "tag_f1"
    assert (trace["test_metric"] == trace["test_tag_f1"]).all()


@pytest.mark.parametrize("options, message", [
    ({"tag_scheme": "bio"}, "data.tag_scheme=bio"),
    ({"columns": ["pos", "ner"]}, "'word' among them"),
    ({"train": "/no/such/file"}, "no such file"),
    ({"tag_scheme": "none", "metric": "chunk_f1"}, "data.metric=chunk_f1"),
])
def test_conll_files_bad_options_are_named(conll2002_files, options, message):
    given = {"train": str(conll2002_files / "esp.train"),
             "test": str(conll2002_files / "esp.testb"), **options}
    with pytest.raises(UserError, match=message):
        load_split("conll_files", **given)


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_arrays_archive_round_trip(tmp_path, layout):
    """data=arrays reads back what a user saved: the same sequences, labels and features,
    dense or CSR, with a test part or without (then test = train)."""
    from ssvmbench.data.synthetic import random_chains
    full = random_chains(30, 3, 6, seed=2)
    parts = {"train": full.subset(range(20)), "test": full.subset(range(20, 30))}
    arrays = {"label_names": np.array(["O", "B-X", "I-X"])}
    for split, ds in parts.items():
        arrays[f"{split}_offsets"], arrays[f"{split}_labels"] = ds.offsets, ds.labels
        if layout == "dense":
            dense = np.zeros((ds.n_tokens, ds.n_features))
            rows = np.repeat(np.arange(ds.n_tokens), np.diff(ds.feat_ptr))
            dense[rows, ds.feat_idx] = ds.feat_val
            arrays[f"{split}_features"] = dense
        else:
            arrays.update({f"{split}_indptr": ds.feat_ptr, f"{split}_indices": ds.feat_idx,
                           f"{split}_values": ds.feat_val})
    np.savez(tmp_path / "mine.npz", **arrays)
    split = load_split("arrays", path=str(tmp_path / "mine.npz"))
    for name, ds in parts.items():
        got = getattr(split, name)
        for key in ("offsets", "labels", "feat_ptr", "feat_idx", "feat_val"):
            np.testing.assert_array_equal(getattr(got, key), getattr(ds, key), err_msg=key)
    assert split.train.label_names == ("O", "B-X", "I-X") and split.metric == "chunk_f1"
    np.savez(tmp_path / "train_only.npz",
             **{k: v for k, v in arrays.items() if not k.startswith("test_")})
    alone = load_split("arrays", path=str(tmp_path / "train_only.npz"))
    assert alone.test is alone.train and "test = train" in alone.variant
    with pytest.raises(UserError, match="no train_offsets"):
        np.savez(tmp_path / "empty.npz", x=np.zeros(1))
        load_split("arrays", path=str(tmp_path / "empty.npz"))


def _archive(tmp_path, layout, **change):
    """A small valid archive (dense or CSR features), with ``change``'s arrays replaced."""
    from ssvmbench.data.synthetic import random_chains
    ds = random_chains(6, 3, 4, seed=1)
    arrays = {"train_offsets": ds.offsets, "train_labels": ds.labels}
    if layout == "dense":
        dense = np.zeros((ds.n_tokens, ds.n_features))
        rows = np.repeat(np.arange(ds.n_tokens), np.diff(ds.feat_ptr))
        dense[rows, ds.feat_idx] = ds.feat_val
        arrays["train_features"] = dense
    else:
        arrays.update(train_indptr=ds.feat_ptr, train_indices=ds.feat_idx,
                      train_values=ds.feat_val)
    for key, edit in change.items():
        arrays[key] = edit(arrays[key].copy())
    path = tmp_path / f"{layout}.npz"
    np.savez(path, **arrays)
    return path, ds


def _put(index, value):
    def edit(a):
        a = a.astype(type(value)) if isinstance(value, (float, str)) else a
        a.flat[index] = value
        return a
    return edit


@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_your_own_features_must_be_finite_and_the_bad_one_is_named(tmp_path, layout, bad):
    """Issue 29: a NaN or infinite feature ended as 'diverged' after training; now it is one
    line naming the split, the example, the token and the column."""
    path, ds = _archive(tmp_path, layout)
    token = int(ds.offsets[3]) + 1                             # example 3, its token 1
    column = int(ds.feat_idx[ds.feat_ptr[token]])
    key = "train_features" if layout == "dense" else "train_values"
    index = token * ds.n_features + column if layout == "dense" else int(ds.feat_ptr[token])
    path, _ = _archive(tmp_path, layout, **{key: _put(index, bad)})
    with pytest.raises(UserError, match=f"train split, example 3, token 1, column {column}"):
        load_split("arrays", path=str(path))


@pytest.mark.parametrize("change, message", [
    ({"train_labels": _put(4, 1.5)}, r"train_labels\[4\] = 1.5: tags are whole numbers"),
    ({"train_labels": _put(0, -1)}, r"train_labels\[0\] = -1"),
    ({"train_features": lambda a: a.astype(str)}, "train_features holds <U32 values, not "
                                                  "numbers"),
])
def test_your_own_labels_and_features_are_checked(tmp_path, change, message):
    path, _ = _archive(tmp_path, "dense", **change)
    with pytest.raises(UserError, match=message):
        load_split("arrays", path=str(path))


def test_an_archive_that_is_not_npz_is_one_line(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros(3))
    (tmp_path / "x.csv").write_text("1,2,3\n")
    for name in ("x.npy", "x.csv"):
        with pytest.raises(UserError, match="not a NumPy .npz archive"):
            load_split("arrays", path=str(tmp_path / name))


def _emptied(split):
    """An edit making ``split`` of an archive hold no sequence (its arrays of length 0)."""
    return {f"{split}_offsets": lambda a: a[:1], f"{split}_labels": lambda a: a[:0],
            f"{split}_indptr": lambda a: a[:1], f"{split}_indices": lambda a: a[:0],
            f"{split}_values": lambda a: a[:0]}


@pytest.mark.parametrize("change, message", [
    (_emptied("train"), r"the train split is empty \(train_offsets holds \[0\]: 0, then the "
                        r"end of each sequence\); give at least one sequence"),
    ({"train_labels": _put(0, 2_000_000)}, r"2000001 labels and \d+ features make a model of "
     r"29,802.\d GiB \(the transition table alone 29,802.\d GiB\), more than this machine's "
     r"[\d,.]+ GiB of memory; the largest tag is 2000000 \(in train_labels\)"),
    ({"train_indices": lambda a: a.astype(np.int64) + 2**31},
     r"train_indices holds the feature index \d+; indices are below 2\*\*31"),
    ({"train_offsets": lambda a: a[:, None]}, r"train_offsets has shape \(7, 1\); it must be "
                                              "one-dimensional"),
    ({"train_labels": lambda a: a.reshape(1, -1)}, r"train_labels has shape \(1, \d+\)"),
    ({"train_offsets": lambda a: a + 0.5}, r"train_offsets\[0\] = 0.5: train_offsets holds "
                                           "whole numbers from 0"),
    ({"train_indptr": lambda a: a[::-1]}, r"train_indptr must rise from 0 to the number of "
                                          r"values \(\d+\) in one step per token"),
    ({"train_indptr": lambda a: a[:-1]}, r"\(\d+ tokens: \d+ entries; it has \d+\)"),
])
def test_an_archive_shaped_wrong_is_one_line_before_training(tmp_path, change, message):
    """Issue 47: an empty training split ended in ZeroDivisionError, a tag of 2,000,000 in
    numpy's 'Unable to allocate 29.1 TiB', other shapes in IndexError or silent truncation;
    each is now one line naming the array, when the data loads."""
    path, _ = _archive(tmp_path, "csr", **change)
    with pytest.raises(UserError, match=message):
        load_split("arrays", path=str(path))


def test_an_empty_test_split_or_dense_rows_per_token_are_named(tmp_path):
    """An empty test part says how to test on the training sequences instead; dense
    features need one row per token."""
    path, ds = _archive(tmp_path, "csr")
    arrays = dict(np.load(path))
    arrays.update({f"test_{key[6:]}": edit(arrays[key]) for key, edit in
                   _emptied("train").items()})
    np.savez(path, **arrays)
    with pytest.raises(UserError, match="the test split is empty .*; leave the test_ arrays "
                                        "out to test on the training sequences"):
        load_split("arrays", path=str(path))
    path, ds = _archive(tmp_path, "dense", train_features=lambda a: a[1:])
    with pytest.raises(UserError, match=rf"train_features has shape \({ds.n_tokens - 1}, "
                                        rf"{ds.n_features}\); it must be a \(tokens, features\) "
                                        rf"matrix, one row per token \({ds.n_tokens}\)"):
        load_split("arrays", path=str(path))
