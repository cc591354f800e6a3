"""``InvalidInputError`` for the modules ``lance-ns --help`` imports (modes, identifiers,
limits): raised through :func:`invalid_input`, the class is imported only when one is
raised, so importing those modules does not import lance_namespace (~0.6 s: its package
imports the whole generated REST client)."""


def invalid_input(message: str):
    """``InvalidInputError(message)``, to raise."""
    from .errors import InvalidInputError

    return InvalidInputError(message)
