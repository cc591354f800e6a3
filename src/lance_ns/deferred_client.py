"""lance_namespace's generated REST client imported without building its ~370 method validators.

Every ``from lance_namespace import ...`` runs ``lance_namespace_urllib3_client``'s package,
which imports its nine API classes; each of their ~370 methods is wrapped in pydantic's
``@validate_call``, which builds a validator on the spot: ~0.5 s of every lance-ns
process's start (a CLI command, a server worker, a Spark executor's driver side), for API
classes that lance-ns never calls and other code calls a few of.

pydantic's own ``defer_build`` setting postpones that build to a method's first call, with
the same validation afterwards.  The generated modules give no config, so while one of
them executes, ``pydantic.validate_call`` is the same decorator with ``defer_build`` set.
Nothing else changes: the models are imported as they are, a process that imported
the client before lance_ns gets it as it was, and once the API package is imported the
finder is gone from ``sys.meta_path`` (no later import passes through it).  (A module
another thread imports in those milliseconds, taking ``validate_call`` from pydantic, is
deferred the same way: its validators are built at their first call too.)
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import sys
import threading

_API_PACKAGE = "lance_namespace_urllib3_client.api."
_swap = threading.RLock()  # one module's execution at a time swaps the decorator


class _DeferringLoader(importlib.abc.Loader):
    def __init__(self, loader: importlib.abc.Loader):
        self._loader = loader

    def __getattr__(self, name):  # get_source, get_resource_reader, ...: the file loader's
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        import pydantic  # here, not at the top: installing must not import it

        with _swap:
            eager = pydantic.validate_call
            # a partial adds no frame: validate_call still sees the class body that applies
            # it as the namespace for the method's annotations, as it would without us
            pydantic.validate_call = functools.partial(eager, config={"defer_build": True})
            try:
                self._loader.exec_module(module)
            finally:
                pydantic.validate_call = eager


class _UninstallingLoader(_DeferringLoader):
    """The API package itself: its ``__init__`` imports every API module (each deferred
    while it runs); once it has run, the finder leaves ``sys.meta_path``, so no later
    import anywhere in the process goes through it."""

    def exec_module(self, module) -> None:
        try:
            self._loader.exec_module(module)
        finally:
            uninstall()


class _DeferringFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _API_PACKAGE[:-1] and not name.startswith(_API_PACKAGE):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = (_UninstallingLoader if name == _API_PACKAGE[:-1] else _DeferringLoader)(spec.loader)
        return spec


def install() -> None:
    """Defer the API classes' validators, unless the client is imported already.  The
    finder answers for the client's API modules only, and only until they are imported:
    it removes itself then (:class:`_UninstallingLoader`)."""
    if "lance_namespace_urllib3_client" in sys.modules:
        return
    if not any(isinstance(finder, _DeferringFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _DeferringFinder())


def uninstall() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _DeferringFinder)]
