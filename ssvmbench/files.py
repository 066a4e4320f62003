"""Writing a file so that readers see the old one or the whole new one, never a part."""

import os
import tempfile
from pathlib import Path


def write_atomically(path, write):
    """Call ``write(file)`` on a private temporary file beside ``path`` (``<name>.*.tmp``;
    concurrent writers never share one), then rename it to ``path`` with the permissions a
    new file gets. A write that fails or is interrupted leaves no temporary file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
