"""The one error table: code -> name -> exception class -> HTTP status (the statuses
themselves: :mod:`lance_ns.error_codes`, which imports nothing).

Every backend raises the ``lance_namespace.errors`` classes so that pylance,
LanceDB and our REST server all see the same numeric ``code``.  The REST
server and client translate through :data:`ERRORS` only.
"""

from __future__ import annotations

from dataclasses import dataclass

from .error_codes import HTTP_STATUS, TRANSPORT_STATUS
from lance_namespace.errors import (
    ConcurrentModificationError,
    ErrorCode,
    InternalError,
    InvalidInputError,
    InvalidTableStateError,
    LanceNamespaceError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    PermissionDeniedError,
    ServiceUnavailableError,
    TableAlreadyExistsError,
    TableBranchAlreadyExistsError,
    TableBranchNotFoundError,
    TableColumnNotFoundError,
    TableIndexAlreadyExistsError,
    TableIndexNotFoundError,
    TableNotFoundError,
    TableSchemaValidationError,
    TableTagAlreadyExistsError,
    TableTagNotFoundError,
    TableVersionNotFoundError,
    ThrottlingError,
    TransactionNotFoundError,
    UnauthenticatedError,
    UnsupportedOperationError,
)

__all__ = [
    "ERRORS",
    "ErrorCode",
    "ErrorInfo",
    "LanceNamespaceError",
    "error_from_code",
    "http_status",
    "error_body",
    "PayloadTooLargeError",
    "RequestTimeoutError",
    "NoRouteError",
    "MethodNotAllowedError",
    "transport_refusal",
    # re-exported classes
    "UnsupportedOperationError",
    "NamespaceNotFoundError",
    "NamespaceAlreadyExistsError",
    "NamespaceNotEmptyError",
    "TableNotFoundError",
    "TableAlreadyExistsError",
    "TableIndexNotFoundError",
    "TableIndexAlreadyExistsError",
    "TableTagNotFoundError",
    "TableTagAlreadyExistsError",
    "TransactionNotFoundError",
    "TableVersionNotFoundError",
    "TableColumnNotFoundError",
    "InvalidInputError",
    "ConcurrentModificationError",
    "PermissionDeniedError",
    "UnauthenticatedError",
    "ServiceUnavailableError",
    "InternalError",
    "InvalidTableStateError",
    "TableSchemaValidationError",
    "ThrottlingError",
    "TableBranchNotFoundError",
    "TableBranchAlreadyExistsError",
]


@dataclass(frozen=True)
class ErrorInfo:
    code: int
    name: str
    exc: type[LanceNamespaceError]
    http_status: int


def _row(exc: type[LanceNamespaceError]) -> ErrorInfo:
    code = int(exc.code)
    return ErrorInfo(code, ErrorCode(code).name, exc, HTTP_STATUS[code])


#: code -> ErrorInfo: each code's class, name and HTTP status (the statuses are decided in
#: :data:`lance_ns.error_codes.HTTP_STATUS`, the table's dependency-free half)
ERRORS: dict[int, ErrorInfo] = {
    row.code: row
    for row in map(_row, (
        UnsupportedOperationError, NamespaceNotFoundError, NamespaceAlreadyExistsError, NamespaceNotEmptyError,
        TableNotFoundError, TableAlreadyExistsError, TableIndexNotFoundError, TableIndexAlreadyExistsError,
        TableTagNotFoundError, TableTagAlreadyExistsError, TransactionNotFoundError, TableVersionNotFoundError,
        TableColumnNotFoundError, InvalidInputError, ConcurrentModificationError, PermissionDeniedError,
        UnauthenticatedError, ServiceUnavailableError, InternalError, InvalidTableStateError,
        TableSchemaValidationError, ThrottlingError, TableBranchNotFoundError, TableBranchAlreadyExistsError,
    ))
}
assert set(ERRORS) == set(HTTP_STATUS), "every code has a class and a status"

class PayloadTooLargeError(InvalidInputError):
    """Input over a configured size limit: code 13, answered HTTP 413 by the server."""


class RequestTimeoutError(InvalidInputError):
    """A request body not received in time: code 13, answered HTTP 408."""


class NoRouteError(UnsupportedOperationError):
    """No route of the protocol at a path: code 0, answered HTTP 404."""


class MethodNotAllowedError(UnsupportedOperationError):
    """A route asked with an HTTP method it does not take: code 0, answered HTTP 405."""


def transport_refusal(status: int, message: str) -> LanceNamespaceError:
    """The error of an HTTP framework's own refusal (Starlette's HTTPException): no route
    at a path (404), a method a route does not take (405), else bad input."""
    return {404: NoRouteError, 405: MethodNotAllowedError}.get(status, InvalidInputError)(message)


#: the transport's conditions: their own HTTP status, their code's body
_TRANSPORT_STATUS: tuple[tuple[type, int], ...] = (
    (PayloadTooLargeError, TRANSPORT_STATUS["payload_too_large"]),
    (RequestTimeoutError, TRANSPORT_STATUS["request_timeout"]),
    (NoRouteError, TRANSPORT_STATUS["no_route"]),
    (MethodNotAllowedError, TRANSPORT_STATUS["method_not_allowed"]),
)

#: HTTP status -> code, for peers that send a status without a usable body.
_STATUS_FALLBACK: dict[int, int] = {
    400: 13, 401: 16, 403: 15, 404: 4, 406: 0, 409: 14, 429: 21, 503: 17,
}


def error_from_code(code: int | None, message: str) -> LanceNamespaceError:
    """The exception for a wire ``code`` (unknown codes become InternalError)."""
    info = ERRORS.get(code) if isinstance(code, int) else None
    return (info.exc if info else InternalError)(message)


def error_from_status(status: int, message: str) -> LanceNamespaceError:
    """Best guess for a response that carried no integer ``code``."""
    return error_from_code(_STATUS_FALLBACK.get(status, 18), message)


def code_of(exc: BaseException) -> int:
    if isinstance(exc, LanceNamespaceError):
        return int(exc.code)
    return int(ErrorCode.INTERNAL)


def http_status(exc_or_code: BaseException | int) -> int:
    """The HTTP status of an error (or code): the transport's own conditions', else its code's."""
    if not isinstance(exc_or_code, int):
        for kind, status in _TRANSPORT_STATUS:
            if isinstance(exc_or_code, kind):
                return status
    code = exc_or_code if isinstance(exc_or_code, int) else code_of(exc_or_code)
    info = ERRORS.get(code)
    return info.http_status if info else 500


def error_body(exc: BaseException, instance: str | None = None) -> dict:
    """The JSON ``ErrorResponse`` body for an exception (always an int ``code``)."""
    code = code_of(exc)
    message = str(exc) if isinstance(exc, LanceNamespaceError) else "internal error"
    body = {
        "error": message,
        "code": code,
        "type": ERRORS[code].name if code in ERRORS else "INTERNAL",
        "detail": message,
    }
    if instance:
        body["instance"] = instance
    return body
