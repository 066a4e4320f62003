"""Writing a file so that readers see the old one or the whole new one, never a part: every
file a command writes goes through :func:`write_atomically` (or :func:`write_text`); and a
file's age by its own file system's clock (:func:`age_s`), for locks shared across hosts."""

import contextlib
import os
import socket
import tempfile
import time
from pathlib import Path

from ssvmbench.errors import NotWritten


def write_atomically(path, write):
    """Call ``write(file)`` on a private temporary file beside ``path`` (``<name>.*.tmp``;
    concurrent writers never share one), then rename it to ``path`` with the permissions a
    new file gets. A write that fails or is interrupted leaves no temporary file and
    ``path`` as it was: a file-system error (a full disk, a size limit, no permission) is
    :class:`~ssvmbench.errors.NotWritten`, one line saying so; a Ctrl-C or a stop signal
    (KeyboardInterrupt) goes on, noting the file (``err.not_written``: ``while writing PATH;
    the previous version is intact``)."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            write(out)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException as err:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(err, OSError) and not isinstance(err, NotWritten):
            raise NotWritten(path, err) from None
        if isinstance(err, KeyboardInterrupt):
            err.not_written = f"while writing {path}; {NotWritten.previous(path)}"
        raise


def write_text(path, text):
    """:func:`write_atomically` of ``text`` (UTF-8)."""
    write_atomically(path, lambda out: out.write(text.encode()))


def age_s(path):
    """Seconds since ``path`` was last modified, by the clock of the file system that holds
    it (a file made beside it now gives its "now"), so that hosts whose clocks disagree
    agree on it; infinite if ``path`` is gone, and by this host's clock if nothing can be
    made beside it."""
    probe = f"{path}.now.{socket.gethostname()}.{os.getpid()}"
    try:
        modified = os.stat(path).st_mtime
    except OSError:
        return float("inf")
    try:
        os.close(os.open(probe, os.O_CREAT | os.O_WRONLY))
        now = os.stat(probe).st_mtime
    except OSError:
        now = time.time()
    finally:
        with contextlib.suppress(OSError):
            os.unlink(probe)
    return now - modified
