"""The exception type for bad input (its message says what to do), its case of a combination
that cannot run, and the one check of a numeric setting."""

import math


class UserError(Exception):
    """Bad input (unknown name, invalid value, missing or corrupt data).

    The command line prints only the message and exits with status 2, before any
    result is written.
    """


class Incompatible(UserError):
    """A solver, task and oracle that cannot go together (a solver on a task kind it does not
    declare, an oracle it does not call or that is intractable on the task, an elastic net
    for an L2 solver). A sweep skips such a combination with this reason and runs the rest."""


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
