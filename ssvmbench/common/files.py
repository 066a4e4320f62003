"""Writing a file so that readers see the old one or the whole new one, never a part: every
file a command writes goes through :func:`write_atomically` (or :func:`write_text`)."""

import os
import tempfile
from pathlib import Path

from ssvmbench.common.errors import NotWritten


def write_atomically(path, write, ready=None):
    """Call ``write(file)`` on a private temporary file beside ``path`` (``<name>.*.tmp``;
    concurrent writers never share one), then rename it to ``path`` with the permissions a
    new file gets; ``ready()``, if given, is called just before the rename and may raise to
    leave ``path`` as it was (a run checks there that its directory is still its own: a
    write a pause caught halfway may end after another run took the directory over). A
    write that fails or is interrupted leaves no temporary file and ``path`` as it was: a
    file-system error (a full disk, a size limit, no permission) is
    :class:`~ssvmbench.common.errors.NotWritten`, one line saying so; a Ctrl-C or a stop signal
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
        if ready is not None:
            ready()
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
