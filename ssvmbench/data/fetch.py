"""Dataset files: checksums, lookup under the data root, and downloads (like
scikit-learn's ``fetch_*``: say what is downloaded from where, verify, cache)."""

import hashlib
import os
import sys
import tarfile
import tempfile
from pathlib import Path

import pooch
import yaml

from ssvmbench.errors import UserError
from ssvmbench.paths import data_root, manifest_path

TIMEOUT_S = 15
pooch.get_logger().setLevel("WARNING")   # we say what is downloaded from where ourselves


def load_manifest():
    with open(manifest_path()) as f:
        return yaml.safe_load(f)


def dataset_entry(name):
    manifest = load_manifest()
    if name not in manifest:
        raise UserError(f"unknown dataset '{name}': choose one of {sorted(manifest)}")
    return manifest[name]


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_file(path, expected, dataset):
    """Refuse a file whose sha256 differs from the manifest's, naming it."""
    actual = sha256(path)
    if actual != expected:
        raise UserError(f"{path} is corrupt or truncated (sha256 {actual}, expected {expected}); "
                        f"delete it and run `ssvmbench data fetch {dataset}`")


def ensure_file(dataset, relpath, root=None, download=True):
    """Path of ``relpath`` of ``dataset`` under the data root, or of an alternative form
    named by one of its sources (e.g. the authors' ``letter.data.gz``); fetched first if
    absent and ``download``. A file with a checksum is verified."""
    root = data_root(root)
    spec = dataset_entry(dataset)["files"][relpath]
    path = _present(root, relpath, spec, dataset)
    if path is None and download:
        fetch_file(dataset, relpath, spec, root)
        path = _present(root, relpath, spec, dataset)
    if path is None:
        raise UserError(_missing_message(dataset, relpath, spec, root, download))
    return path


def _present(root, relpath, spec, dataset):
    path = root / relpath
    if path.exists():
        check_file(path, spec["sha256"], dataset)
        return path
    for source in spec["sources"]:
        target = root / source["target"] if "target" in source else None
        if target is not None and target.exists():
            return target
    return None


def fetch_file(dataset, relpath, spec, root):
    """Try the sources in order; the first that works wins. Never leaves a partial file."""
    failures = []
    for source in spec["sources"]:
        for url in source["urls"]:
            try:
                if source["kind"] == "archive":
                    _fetch_member(url, source, root / relpath, spec["sha256"], root)
                else:
                    target = root / source.get("target", relpath)
                    _say(f"Downloading {target.name} from {url} to {target}")
                    _write_atomic(target, _download(url, root, None).read_bytes())
                return
            except (OSError, ValueError, tarfile.TarError, KeyError) as err:
                failures.append(f"{url}: {err}")
                _say(f"  failed ({err}); trying the next source")
    raise UserError(_missing_message(dataset, relpath, spec, root, True) +
                    "\ndownload errors:\n  " + "\n  ".join(failures))


def _fetch_member(url, source, dest, expected, root):
    _say(f"Downloading {dest.name} from {url} (member {source['member']}) to {dest}")
    archive = _download(url, root, source["archive_sha256"])
    with tarfile.open(archive) as tar:
        content = tar.extractfile(source["member"]).read()
    actual = hashlib.sha256(content).hexdigest()
    if actual != expected:
        raise ValueError(f"member sha256 {actual} differs from the expected {expected}")
    _write_atomic(dest, content)


def _download(url, root, known_hash):
    """Download into ``root/.downloads`` (pooch caches and checks ``known_hash``)."""
    downloader = pooch.HTTPDownloader(timeout=TIMEOUT_S, progressbar=sys.stderr.isatty())
    return Path(pooch.retrieve(url, known_hash=known_hash and f"sha256:{known_hash}",
                               path=root / ".downloads", downloader=downloader,
                               progressbar=False))


def _write_atomic(dest, content):
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _missing_message(dataset, relpath, spec, root, tried_download):
    urls = [url for source in spec["sources"] for url in source["urls"]]
    how = "could not be downloaded" if tried_download else "is missing (download=false)"
    return (f"dataset '{dataset}': {root / relpath} {how}. Get it with "
            f"`ssvmbench data fetch {dataset}`, or put the file there by hand (sha256 "
            f"{spec['sha256']}) from one of: " + ", ".join(urls) +
            ". To use another folder, set SSVMBENCH_DATA_DIR or pass data.root=DIR.")


def _say(message):
    print(message, file=sys.stderr)


def fetch(name, root=None):
    """Download every file of dataset ``name`` that is not already present."""
    return [ensure_file(name, relpath, root, download=True)
            for relpath in dataset_entry(name)["files"]]


def verify(root=None):
    """``[(dataset, file, status)]`` with status ok / missing / corrupt / alternative."""
    root = data_root(root)
    report = []
    for name, entry in load_manifest().items():
        for relpath, spec in entry["files"].items():
            path = root / relpath
            if path.exists():
                status = "ok" if sha256(path) == spec["sha256"] else "corrupt"
            elif any((root / s["target"]).exists() for s in spec["sources"] if "target" in s):
                status = "ok (authors' format)"
            else:
                status = "missing"
            report.append((name, relpath, status))
    return report
