"""The error table's numbers: each spec error code's HTTP status, with no import at all.

:data:`lance_ns.errors.ERRORS` attaches the ``lance_namespace.errors`` class of each code to
these numbers; they live here so that what needs only the numbers (``lance-ns --help``'s
exit-code table) does not pay for ``lance_namespace``'s import (~0.6 s: its package imports
the whole generated REST client).
"""

#: spec error code -> HTTP status.  The only place HTTP statuses are decided.
HTTP_STATUS: dict[int, int] = {
    0: 406,  # UNSUPPORTED
    1: 404,  # NAMESPACE_NOT_FOUND
    2: 409,  # NAMESPACE_ALREADY_EXISTS
    3: 409,  # NAMESPACE_NOT_EMPTY
    4: 404,  # TABLE_NOT_FOUND
    5: 409,  # TABLE_ALREADY_EXISTS
    6: 404,  # TABLE_INDEX_NOT_FOUND
    7: 409,  # TABLE_INDEX_ALREADY_EXISTS
    8: 404,  # TABLE_TAG_NOT_FOUND
    9: 409,  # TABLE_TAG_ALREADY_EXISTS
    10: 404,  # TRANSACTION_NOT_FOUND
    11: 404,  # TABLE_VERSION_NOT_FOUND
    12: 404,  # TABLE_COLUMN_NOT_FOUND
    13: 400,  # INVALID_INPUT
    14: 409,  # CONCURRENT_MODIFICATION
    15: 403,  # PERMISSION_DENIED
    16: 401,  # UNAUTHENTICATED
    17: 503,  # SERVICE_UNAVAILABLE
    18: 500,  # INTERNAL
    19: 409,  # INVALID_TABLE_STATE
    20: 400,  # TABLE_SCHEMA_VALIDATION_ERROR
    21: 429,  # THROTTLING
    22: 404,  # TABLE_BRANCH_NOT_FOUND
    23: 409,  # TABLE_BRANCH_ALREADY_EXISTS
}

#: the HTTP statuses of conditions of the transport, each answered with a spec code in its
#: body (lance_ns.errors: the classes of these conditions)
TRANSPORT_STATUS: dict[str, int] = {
    "payload_too_large": 413,  # code 13: a body (raw or decoded) over a configured limit
    "request_timeout": 408,  # code 13: a body not received in time
    "no_route": 404,  # code 0: no route of the protocol at that path
    "method_not_allowed": 405,  # code 0: the path's route takes another HTTP method
}

