"""Exit codes of ``lance-ns``, derived from the one error table.

Each error code's HTTP status (:data:`lance_ns.error_codes.HTTP_STATUS`) already sorts
it into not found / conflict / invalid / unavailable / ...; the exit code
follows that class, so a new error code needs no change here.  (The numbers alone:
``lance-ns --help`` prints this table without importing lance_namespace.)
"""

from __future__ import annotations

import sys

from ..error_codes import HTTP_STATUS

EXIT_OK, EXIT_ERROR, EXIT_INVALID, EXIT_NOT_FOUND, EXIT_CONFLICT = 0, 1, 2, 3, 4
EXIT_UNAVAILABLE, EXIT_UNSUPPORTED, EXIT_DENIED = 5, 6, 7

#: the HTTP class of an error code (lance_ns.errors.ERRORS) -> exit code
_EXIT_BY_STATUS = {
    400: EXIT_INVALID,
    404: EXIT_NOT_FOUND,
    409: EXIT_CONFLICT,
    429: EXIT_UNAVAILABLE,
    503: EXIT_UNAVAILABLE,
    406: EXIT_UNSUPPORTED,
    401: EXIT_DENIED,
    403: EXIT_DENIED,
}


class Declined(Exception):
    """The user answered no to a confirmation: exit 1, nothing done."""


def exit_code(exc: BaseException) -> int:
    errors = sys.modules.get("lance_namespace.errors")  # not imported: exc cannot be one of them
    if errors is None or not isinstance(exc, errors.LanceNamespaceError):
        return EXIT_ERROR
    return _EXIT_BY_STATUS.get(HTTP_STATUS.get(int(exc.code), 500), EXIT_ERROR)


def exit_table() -> str:
    groups: dict[int, list[str]] = {}
    for code, status in sorted(HTTP_STATUS.items()):
        groups.setdefault(_EXIT_BY_STATUS.get(status, EXIT_ERROR), []).append(f"{code}")
    names = {
        EXIT_ERROR: "other errors (internal, ...)",
        EXIT_INVALID: "invalid input / usage",
        EXIT_NOT_FOUND: "not found (exists: it does not)",
        EXIT_CONFLICT: "conflict (already exists, not empty, concurrent change)",
        EXIT_UNAVAILABLE: "service unavailable or throttled",
        EXIT_UNSUPPORTED: "operation not supported by the backend",
        EXIT_DENIED: "unauthenticated / permission denied",
    }
    lines = ["exit codes (from the error code of the failure):", "  0  success; check: every check passed"]
    for ex in sorted(names):
        codes = ", ".join(groups.get(ex, []))
        extra = "; check: some check failed" if ex == EXIT_ERROR else ""
        lines.append(f"  {ex}  {names[ex]}{extra}" + (f"  [error codes {codes}]" if codes else ""))
    return "\n".join(lines)
