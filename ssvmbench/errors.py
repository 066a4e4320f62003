"""The one exception type for bad input: its message says what to do."""


class UserError(Exception):
    """Bad input (unknown name, invalid value, missing or corrupt data).

    The command line prints only the message and exits with status 2, before any
    result is written.
    """
