"""Every field of every request the lance-ns backends implement is exercised
by a check of the shared scenario (lance_ns.conformance), so an option a
backend silently ignores cannot hide: some check sends it and judges the
answer.  The scenario's checks name their fields through their calls'
requests (``Check.fields``).

Two explicit lists, each entry justified:

* ``TRANSPORT``: fields that are no option of the operation.
* ``NOT_YET_CHECKED``: the known gap, shrinking.  The test also fails when a
  field listed there becomes covered, so the list is kept honest.
"""

from __future__ import annotations

import importlib

from lance_ns.base import BY_OP_ID
from lance_ns.conformance import CHECKS
from lance_ns.impls import IMPLS

#: field -> why no conformance check names it
TRANSPORT = {
    "identity": "who calls (credentials); the server's auth layer judges it, checked by http.unauthenticated",
    "context": "per-request transport entries (headers); the purge entry is tested in test_conformance.py",
}

#: operation -> fields no scenario check sends yet: empty, and a field added to a model must come
#: with a check (or an entry here saying why not)
NOT_YET_CHECKED: dict[str, str] = {}


def implemented_operations() -> set[str]:
    """OperationIds some backend implements itself (the REST client only forwards)."""
    ops: set[str] = set()
    for alias, (path, _extra) in IMPLS.items():
        if alias == "rest":
            continue
        module, name = path.split(":")
        ops |= set(getattr(importlib.import_module(module), name).supported_operations())
    return ops


def _covered() -> set[str]:
    return set().union(*(c.fields for c in CHECKS))


def test_every_request_field_is_exercised_by_a_check():
    covered = _covered()
    gaps = {f"{op}.{f}" for op, fields in NOT_YET_CHECKED.items() for f in fields.split()}
    unexercised = sorted(
        f"{op}.{field}"
        for op in implemented_operations()
        for field in BY_OP_ID[op].request.model_fields
        if f"{op}.{field}" not in covered and field not in TRANSPORT and f"{op}.{field}" not in gaps
    )
    assert not unexercised, f"request fields no conformance check sends: {unexercised}"


def test_the_gap_list_only_lists_gaps():
    covered = _covered()
    ops = implemented_operations()
    for op, fields in NOT_YET_CHECKED.items():
        assert op in ops, f"{op} is implemented by no backend: drop it from NOT_YET_CHECKED"
        for field in fields.split():
            assert field in BY_OP_ID[op].request.model_fields, f"{op} has no field {field!r}"
            assert f"{op}.{field}" not in covered, f"{op}.{field} is checked now: remove it from NOT_YET_CHECKED"
    assert not covered & {f"{op}.{f}" for op in BY_OP_ID for f in TRANSPORT}


def test_checks_name_only_real_fields():
    for check in CHECKS:
        for name in check.fields:
            op, field = name.split(".", 1)
            assert field in BY_OP_ID[op].request.model_fields, (check.name, name)


def test_a_new_field_no_check_sends_fails(monkeypatch):
    """The coverage test can fail: a field added to a request model is caught."""
    model = BY_OP_ID["CreateNamespace"].request
    monkeypatch.setattr(model, "model_fields", {**model.model_fields, "new_option": model.model_fields["mode"]})
    try:
        test_every_request_field_is_exercised_by_a_check()
    except AssertionError as e:
        assert "CreateNamespace.new_option" in str(e)
    else:
        raise AssertionError("an unexercised field went unnoticed")
