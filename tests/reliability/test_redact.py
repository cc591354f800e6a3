"""The one masking rule (lance_ns.redact): which keys are secrets, what is masked in text."""

from __future__ import annotations

import logging

import pytest

from lance_ns.redact import MASK, RedactingFilter, is_secret_key, redact_mapping, redact_text


@pytest.mark.parametrize(
    "key",
    ["storage.aws_secret_access_key", "storage.aws_session_token", "storage.aws_access_key_id", "auth_token",
     "api_key", "header.x-api-key", "password", "storage.azure_storage_connection_string",
     "storage.azure_storage_sas_key", "storage.google_service_account_key", "client_credential", "CLIENT_SECRET"],
)  # fmt: skip
def test_secret_keys(key):
    assert is_secret_key(key)
    assert redact_mapping({key: "value-1"}) == {key: MASK}


@pytest.mark.parametrize("key", ["root", "uri", "storage.region", "storage.endpoint", "storage.allow_http",
                                 "pool.max_connections", "delimiter", "dir.manifest_enabled"])  # fmt: skip
def test_keys_that_are_no_secret_keep_their_value(key):
    assert not is_secret_key(key)
    assert redact_mapping({key: "s3://bucket/lake"}) == {key: "s3://bucket/lake"}


@pytest.mark.parametrize(
    "text, hidden, kept",
    [
        ("https://admin:pw-1@host:9000/x", "pw-1", "https://admin:***@host:9000/x"),
        ("s3://bucket/lake?sig=sig-2&se=2030", "sig-2", "se=2030"),
        ("http://h/x?token=tok-3", "tok-3", "http://h/x?token=***"),
        ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=key-4==;EndpointSuffix=core.windows.net",
         "key-4", "AccountName=acct;AccountKey=***;EndpointSuffix"),
        ("BlobEndpoint=https://a.blob;SharedAccessSignature=sv=2020&sig=sas-5", "sas-5", "BlobEndpoint=https://a.blob"),
        ('{"aws_secret_access_key": "sk-6", "region": "eu"}', "sk-6", '"region": "eu"'),
        ("{'aws_session_token': 'st-7', 'endpoint': 'http://h'}", "st-7", "'endpoint': 'http://h'"),
        ("failed with password=pw-8 on retry", "pw-8", "on retry"),
    ],
)  # fmt: skip
def test_secrets_in_text_are_masked(text, hidden, kept):
    shown = redact_text(text)
    assert hidden not in shown and kept in shown, shown


@pytest.mark.parametrize("text", ["KeyError: 'zzz not found in schema'", "GET /v1/namespace/a$b/list 200 1.2ms",
                                  "s3://bucket/path/t.lance", "table 'token' already exists"])  # fmt: skip
def test_ordinary_text_is_unchanged(text):
    assert redact_text(text) == text


def test_the_logging_filter_masks_messages_and_tracebacks():
    try:
        raise RuntimeError("cannot open s3://u:pw-9@bucket/x")
    except RuntimeError as e:
        record = logging.LogRecord("lance_ns.server", logging.ERROR, __file__, 1, "failed: %s", (e,), None)
        import sys

        record.exc_info = sys.exc_info()
    assert RedactingFilter().filter(record)
    assert "pw-9" not in record.getMessage() and "pw-9" not in record.exc_text
    assert "u:***@bucket" in record.getMessage()


@pytest.mark.parametrize("key", ["page_token", "next_page_token", "partition_key", "primary_key", "base_tokenizer"])
def test_protocol_fields_that_contain_a_secret_word_are_no_secret(key):
    assert not is_secret_key(key)


def test_redact_tree_masks_by_key_and_keeps_types():
    from lance_ns.redact import redact_tree

    tree = {"namespaces": ["a"], "page_token": "p1", "version": 3, "ok": True, "none": None,
            "storage_options": {"aws_secret_access_key": "sk", "region": "eu"}, "uri": "http://u:pw@h"}
    assert redact_tree(tree) == {"namespaces": ["a"], "page_token": "p1", "version": 3, "ok": True, "none": None,
                                 "storage_options": {"aws_secret_access_key": MASK, "region": "eu"},
                                 "uri": f"http://u:{MASK}@h"}


def test_scrubber_removes_known_secret_values_wherever_quoted():
    from lance_ns.redact import Scrubber

    scrub = Scrubber()
    scrub.learn({"password": "hunter2-x", "uri": "http://ann:pw-in-uri@h", "dsn": "host=h;sig=sig-val-1", "pin": "abc"})
    text = scrub("login failed for hunter2-x at ann/pw-in-uri, sig-val-1; abc stays")
    assert "hunter2-x" not in text and "pw-in-uri" not in text and "sig-val-1" not in text and "abc stays" in text


def test_public_fields_keep_their_value_in_text_too():
    assert redact_text('{"page_token": "b", "auth_token": "t-1"}') == '{"page_token": "b", "auth_token": "***"}'
    assert redact_text("?page_token=b&token=t-2") == "?page_token=b&token=***"


def test_a_formatter_that_formats_the_exception_itself_gets_only_masked_text():
    """Some formatters (pyspark's JSON one, whose logger class may be installed process-wide)
    render ``exc_info`` themselves instead of the masked ``exc_text``: none is left to them."""
    import io
    import json

    class JsonFormatter(logging.Formatter):
        def format(self, record):
            exc = record.exc_info[1] if record.exc_info else None
            return json.dumps({"msg": record.getMessage(), "exception": str(exc) if exc else None,
                               "text": record.exc_text})

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("lance_ns.test.json_formatter")
    logger.addFilter(RedactingFilter())
    logger.addHandler(handler)
    logger.propagate = False
    try:
        raise RuntimeError("backend bug with password=hunter2")
    except RuntimeError:
        logger.exception("failed")
    logged = out.getvalue()
    assert "hunter2" not in logged and "backend bug" in logged and "RuntimeError" in logged
