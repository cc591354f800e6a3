"""Something a Spark job's tasks do once, whichever task gets there first."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")


def once_per_job(marker: str | os.PathLike, action: Callable[[], object]) -> Callable[[T], T]:
    """A UDF body that answers its argument and, in the first task to call it (in any
    worker process), runs ``action`` first: ``marker`` is made exclusively, and whoever
    made it runs ``action``.  A test asserts ``marker`` exists to know ``action`` ran.

    The UDF is a closure, so Spark pickles it by value: a worker needs no ``tests`` import."""
    path = str(Path(marker))

    def udf(value: T) -> T:
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return value
        action()
        return value

    return udf
