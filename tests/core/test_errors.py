import lance_namespace.errors as le
import pytest

from lance_ns.errors import ERRORS, error_body, error_from_code, error_from_status, http_status


def test_table_covers_every_code_of_the_ecosystem_once():
    assert sorted(ERRORS) == sorted(int(c) for c in le.ErrorCode)
    for code, info in ERRORS.items():
        assert int(info.exc.code) == code


@pytest.mark.parametrize(
    "code,status",
    [(0, 406), (1, 404), (2, 409), (3, 409), (4, 404), (5, 409), (11, 404), (13, 400), (14, 409),
     (15, 403), (16, 401), (17, 503), (18, 500), (19, 409), (20, 400), (21, 429)],
)
def test_http_statuses(code, status):
    assert http_status(code) == status
    assert http_status(error_from_code(code, "x")) == status


def test_unknown_codes_and_plain_exceptions_are_internal():
    assert isinstance(error_from_code(999, "x"), le.InternalError)
    assert isinstance(error_from_code(None, "x"), le.InternalError)
    assert http_status(RuntimeError("boom")) == 500
    body = error_body(RuntimeError("secret detail"))
    assert body["code"] == 18 and "secret detail" not in body["error"]


def test_error_body_has_integer_code():
    body = error_body(le.TableNotFoundError("no t"))
    assert body == {"error": "no t", "code": 4, "type": "TABLE_NOT_FOUND", "detail": "no t"}


def test_status_fallback():
    assert isinstance(error_from_status(404, "x"), le.TableNotFoundError)
    assert isinstance(error_from_status(503, "x"), le.ServiceUnavailableError)
    assert isinstance(error_from_status(502, "x"), le.InternalError)
