"""The exception type for bad input (its message says what to do), and its case of a
combination that cannot run."""


class UserError(Exception):
    """Bad input (unknown name, invalid value, missing or corrupt data).

    The command line prints only the message and exits with status 2, before any
    result is written.
    """


class Incompatible(UserError):
    """A solver, task and oracle that cannot go together (a solver on a task kind it does not
    declare, an oracle it does not call or that is intractable on the task, an elastic net
    for an L2 solver). A sweep skips such a combination with this reason and runs the rest."""
