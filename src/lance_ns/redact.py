"""The one masking rule for secrets in ``repr``, logs, error messages and CLI output.

* a property or storage option whose key names a secret (``secret``, ``token``,
  ``password``, ``credential``, ``key``, ``connection_string``, ``sas``,
  ``signature``...) shows as ``***``.  ``key`` deliberately covers
  ``aws_access_key_id``: a key id is half a credential and names the account;
* in free text (values, URIs, messages): the password of a URI's userinfo
  (``https://user:***@host``), query-string tokens (``?sig=***``,
  ``&token=***``...) and the secret parts of connection strings
  (``AccountKey=***``, ``SharedAccessSignature=***``) are masked.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Mapping

MASK = "***"

_SECRET_WORDS = (
    "secret", "token", "password", "passwd", "pwd", "credential", "key", "connection_string",
    "connectionstring", "sas", "signature", "sig", "auth",
)  # fmt: skip
#: a key names a secret when one of its ``_ . - /`` separated words contains a secret word
_SECRET_KEY = re.compile("|".join(_SECRET_WORDS), re.I)
#: ``scheme://user:password@host``: the password part
_URI_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.\-]*://[^/\s:@]*:)(?P<secret>[^@\s/]+)(?=@)", re.I)
_NAME = r"[A-Za-z0-9_.\-]*(?:" + "|".join(_SECRET_WORDS) + r")[A-Za-z0-9_.\-]*"
#: ``?sig=...`` / ``&token=...`` / ``AccountKey=...;``: a secret-named parameter's value
_PARAM = re.compile(r"(?P<head>(?:^|(?<=[?&;\s,{(]))" + _NAME + r"\s*=\s*)(?P<secret>[^&;\s\"',})]+)", re.I)
#: ``"aws_secret_access_key": "..."`` / ``'token': '...'``: a quoted secret-named key in JSON or a repr
_QUOTED = re.compile(r"(?P<head>(?P<q>[\"'])" + _NAME + r"(?P=q)\s*:\s*(?P<v>[\"']))(?P<secret>.*?)(?=(?P=v))", re.I)


def is_secret_key(key: str) -> bool:
    """Whether a property / option / parameter name names a secret."""
    return bool(_SECRET_KEY.search(str(key)))


def redact_text(text: str) -> str:
    """``text`` with passwords in URIs and secret-named parameters masked."""
    if not text:
        return text
    for pattern in (_URI_PASSWORD, _PARAM, _QUOTED):
        text = pattern.sub(lambda m: m.group("head") + MASK, text)
    return text


def redact_value(key: str, value: Any) -> str:
    """How a property shows: masked entirely if its key names a secret, else its text redacted."""
    if is_secret_key(key):
        return MASK
    return redact_text(str(value))


def redact_mapping(values: Mapping[str, Any]) -> dict[str, str]:
    return {k: redact_value(k, v) for k, v in values.items()}


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in the message and the formatted traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact_text(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = redact_text(record.exc_text)
        return True
