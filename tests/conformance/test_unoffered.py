"""A backend declared not to offer an optional operation (``Backend.unoffered``: the scenario's
checks that use it are not generated for it, test_scenario.py) answers it Unsupported, code 0:
the declaration that leaves those checks out is true."""

from __future__ import annotations

import pytest

from lance_ns.base import BY_OP_ID
from lance_ns.errors import code_of


def combinations(backends) -> tuple[tuple[str, str], list]:
    """(backend, operation) for each optional operation a backend declares its client lacks."""
    return ("backend", "operation"), [(b, op) for b in backends for op in sorted(b.unoffered)]


def test_an_unoffered_operation_is_unsupported(backend, operation):
    op = BY_OP_ID[operation]
    with pytest.raises(Exception) as refused:
        # (built without validation: the client is to refuse the operation, not its fields)
        getattr(backend.connect(), op.method)(op.request.model_construct(id=[*backend.parent, "unoffered", "t"]))
    assert code_of(refused.value) == 0 or isinstance(refused.value, NotImplementedError), refused.value
