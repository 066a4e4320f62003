"""Task classes broken on purpose, for the test kit's tests (:mod:`ssvmbench.testing`)."""


def broken(base, **changed):
    """A copy of task class ``base`` with the kernels ``changed`` (its data type is
    ``base``'s: :func:`register` routes that type's kernel calls to the copy, so only the
    changed kernels compile)."""
    class Broken(base):
        kind = "broken"
        kernels = {**base.kernels, **changed}

    return Broken
