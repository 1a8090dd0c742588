"""Re-raising an error with a message that names the operation."""


def restated(error: Exception, message: str) -> Exception:
    """`error`'s class with `message`, or, for a class that cannot be built from a message alone
    (NumPy's _UFuncOutputCastingError wants five arguments), its nearest base class that can:
    `except TypeError` still catches it; raise it `from error` to keep the original chained."""
    for kind in type(error).__mro__:
        try:
            return kind(message)
        except TypeError:
            continue
    return error
