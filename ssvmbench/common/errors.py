"""The exception type for bad input (its message says what to do), its case of a combination
that cannot run, the one check of a numeric setting, and the one line for a file system error
(a file not written whole among them) or a YAML file that does not parse."""

import errno
import math
from pathlib import Path


class UserError(Exception):
    """Bad input (unknown name, invalid value, missing or corrupt data).

    The command line prints only the message and exits with status 2, before any
    result is written.
    """


class Incompatible(UserError):
    """A solver, task and oracle that cannot go together (a solver on a task kind it does not
    declare, an oracle it does not call or that is intractable on the task, an elastic net
    for an L2 solver). A sweep skips such a combination with this reason and runs the rest."""


class PluginError(UserError):
    """A plugin (another package's solver, dataset or metric) broke its contract or raised:
    one line naming it; its traceback goes to the run's ``app.log`` (``SSVMBENCH_DEBUG=1``
    lets it through)."""


def number(name, value, allow_none=False):
    """``value`` as a finite float, or one clear error naming the setting ``name``."""
    if value is None and allow_none:
        return None
    try:
        result = float(value)
    except (TypeError, ValueError):
        result = math.nan
    if not math.isfinite(result) or isinstance(value, bool):
        raise UserError(f"{name}={value} must be a finite number")
    return result


class NotWritten(OSError):
    """A file that could not be written whole (a full disk, a size limit, no permission):
    :func:`~ssvmbench.common.files.write_atomically` left its previous version, if any, as it was,
    and the message says so in one line."""

    def __init__(self, path, err):
        super().__init__(err.errno, err.strerror or str(err), str(path))
        self.path = path

    @staticmethod
    def previous(path):
        """What became of ``path`` when a new version could not be written."""
        return ("the previous version is intact" if Path(path).exists()
                else "no file was left there")

    def __str__(self):
        return (f"could not write {self.path} ({self.strerror}{_hint(self.errno, '; ')}); "
                f"{self.previous(self.path)}")


def _hint(code, before=""):
    """What to do about a file system error of ``errno`` ``code`` (empty if nothing to say)."""
    hint = {errno.EACCES: "check its permissions", errno.EPERM: "check its permissions",
            errno.EROFS: "the file system is read-only; choose another directory",
            errno.ENOSPC: "free some space and run the same command again",
            errno.ENOTDIR: "a part of the path is a file, not a folder",
            errno.EEXIST: "a file of that name is in the way; choose another path",
            errno.ENOENT: "check the path"}.get(code)
    return f"{before}{hint}" if hint else ""


def describe_os_error(err):
    """One line for a file system error (no permission, a read-only or full disk, a missing
    folder): what happened, to which file, and what to do."""
    if isinstance(err, NotWritten):
        return str(err)
    where = " -> ".join(str(name) for name in (err.filename, err.filename2) if name)
    hint = _hint(err.errno) or ("a file size limit (ulimit -f) is in the way"
                                if err.errno == errno.EFBIG else "check the path and the disk")
    return f"{err.strerror or err}{': ' + where if where else ''} ({hint})"


def read_yaml(path):
    """The YAML file ``path`` parsed, or one line naming its line and column."""
    import yaml

    try:
        return yaml.safe_load(Path(path).read_text())
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise UserError(f"{path}{where}: not valid YAML ({problem})") from None
