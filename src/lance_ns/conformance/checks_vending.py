"""Conformance checks of credential vending: ``vend_credentials`` of DescribeTable
and DeclareTable.

Every backend is judged on ``vend_credentials=false`` (the answer carries no
vended credentials).  ``vend_credentials=true`` is judged where the target
declares a vending configuration (capability ``vending``: a lance-ns namespace
with ``credential_vendor.enabled``; see :mod:`lance_ns.vending`): the
``storage_options`` then hold a temporary AWS credential and an
``expires_at_millis`` in the future.  Elsewhere the spec lets the
implementation decide, so those checks are skipped.
"""

from __future__ import annotations

import time

from .model import NS, Call, Check, Fn, Skipped

#: the storage options of a vended AWS credential (pylance's names)
VENDED_KEYS = ("aws_access_key_id", "aws_secret_access_key", "aws_session_token", "expires_at_millis")
#: STS sessions last at most 12 hours: a later expiry is no temporary credential
_LONGEST_MILLIS = 12 * 3600 * 1000


def _vending_configured(run) -> None:
    if "vending" not in run.target.caps:
        raise Skipped("the target declares no credential vending (credential_vendor.enabled)")


def _vended(resp: dict, vars: dict) -> str | None:
    opts = resp.get("storage_options") or {}
    missing = [k for k in VENDED_KEYS if not opts.get(k)]
    if missing:
        return f"vend_credentials=true answered no {', '.join(missing)} (storage_options keys: {sorted(opts)})"
    try:
        expires = int(opts["expires_at_millis"])
    except ValueError:
        return f"expires_at_millis is not an integer: {opts['expires_at_millis']!r}"
    now = int(time.time() * 1000)
    if not now < expires <= now + _LONGEST_MILLIS:
        return f"expires_at_millis {expires} is not within 12 hours from now ({now})"
    return None


def _not_vended(resp: dict, vars: dict) -> str | None:
    opts = resp.get("storage_options") or {}
    vended = sorted(k for k in ("expires_at_millis", "aws_session_token") if k in opts)
    return f"vend_credentials=false answered vended credentials ({', '.join(vended)})" if vended else None


def _only_where_vending(check: Check) -> Check:
    # "vending" needed: a target whose class declares no vending skips it before it runs (a REST
    # server's class is unknown: there the first step asks the target)
    return Check(check.name, check.operation, check.expectation, (Fn(_vending_configured), *check.steps),
                 setup=check.setup, needs=check.needs | {"vending"})


def vending_checks() -> list[Check]:
    table = [NS, "tvend"]
    return [
        Check(
            "table.describe.vend_credentials_false",
            "DescribeTable",
            "vend_credentials=false: storage_options carry no vended credentials",
            (Call("DescribeTable", {"id": table, "vend_credentials": False}, verify=_not_vended),),
            setup=(Call("DeclareTable", {"id": table}),),
        ),
        Check(
            "table.declare.vend_credentials_false",
            "DeclareTable",
            "vend_credentials=false: storage_options carry no vended credentials",
            (Call("DeclareTable", {"id": [NS, "tvend_no"], "vend_credentials": False}, verify=_not_vended),),
        ),
        _only_where_vending(Check(
            "table.describe.vend_credentials",
            "DescribeTable",
            "vend_credentials=true on a vending namespace: a temporary credential and expires_at_millis",
            (Call("DescribeTable", {"id": table, "vend_credentials": True}, verify=_vended),),
        )),
        _only_where_vending(Check(
            "table.declare.vend_credentials",
            "DeclareTable",
            "vend_credentials=true on a vending namespace: a temporary credential and expires_at_millis",
            (Call("DeclareTable", {"id": [NS, "tvend_yes"], "vend_credentials": True}, verify=_vended),),
        )),
    ]  # fmt: skip


VENDING_CHECKS: list[Check] = vending_checks()
