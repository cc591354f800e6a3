"""Errors of the Spark source, raised as :mod:`lance_ns.errors` classes but
imported on first use.

Every Spark task unpickles this package's classes in a Python worker, and a
fresh worker importing :mod:`lance_ns.errors` also imports lance_namespace
and its generated REST client (~1.7 s), which a task that only scans or
writes fragments never needs.
"""

from __future__ import annotations


def error(name: str, message: str) -> Exception:
    """An instance of ``lance_ns.errors.<name>`` carrying ``message``."""
    from .. import errors

    return getattr(errors, name)(message)
