"""The one masking rule for secrets in ``repr``, logs, error messages and CLI output.

* a property or storage option whose key names a secret (``secret``, ``token``,
  ``password``, ``credential``, ``key``, ``connection_string``, ``sas``,
  ``signature``...) shows as ``***``.  ``key`` deliberately covers
  ``aws_access_key_id``: a key id is half a credential and names the account;
* in free text (values, URIs, messages): the password of a URI's userinfo
  (``https://user:***@host``), query-string tokens (``?sig=***``,
  ``&token=***``...) and the secret parts of connection strings
  (``AccountKey=***``, ``SharedAccessSignature=***``) are masked;
* field names of the protocol that merely contain such a word (``page_token``,
  ``primary_key``, ``base_tokenizer``...) name no secret;
* :class:`Scrubber` removes secret values known in advance (a connection's
  configured password) from any text, wherever it is quoted.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Iterable, Mapping

MASK = "***"

_SECRET_WORDS = (
    "secret", "token", "password", "passwd", "pwd", "credential", "key", "connection_string",
    "connectionstring", "sas", "signature", "sig", "auth", "private",
)  # fmt: skip
#: a key names a secret when one of its ``_ . - /`` separated words contains a secret word
_SECRET_KEY = re.compile("|".join(_SECRET_WORDS), re.I)
#: names that contain a secret word but name no secret (paging, table keys, index options)
_PUBLIC_KEY = re.compile(
    r"(^|[._-])(page_token|next_page_token|partition_key|primary_key|sort_key|key_prefix|base_tokenizer"
    r"|max_token_length)$", re.I,
)
#: ``scheme://user:password@host``: the password part
_URI_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.\-]*://[^/\s:@]*:)(?P<secret>[^@\s/]+)(?=@)", re.I)
_NAME = r"[A-Za-z0-9_.\-]*(?:" + "|".join(_SECRET_WORDS) + r")[A-Za-z0-9_.\-]*"
#: ``?sig=...`` / ``&token=...`` / ``AccountKey=...;``: a secret-named parameter's value
_PARAM = re.compile(r"(?P<head>(?:^|(?<=[?&;\s,{(]))(?P<name>" + _NAME + r")\s*=\s*)(?P<secret>[^&;\s\"',})]+)", re.I)
#: ``"aws_secret_access_key": "..."`` / ``'token': '...'``: a quoted secret-named key in JSON or a repr
_QUOTED = re.compile(r"(?P<head>(?P<q>[\"'])(?P<name>" + _NAME + r")(?P=q)\s*:\s*(?P<v>[\"']))(?P<secret>.*?)(?=(?P=v))", re.I)


def is_secret_key(key: str) -> bool:
    """Whether a property / option / parameter name names a secret."""
    key = str(key)
    return bool(_SECRET_KEY.search(key)) and not _PUBLIC_KEY.search(key)


def redact_text(text: str) -> str:
    """``text`` with passwords in URIs and secret-named parameters masked."""
    if not text:
        return text
    for pattern in (_URI_PASSWORD, _PARAM, _QUOTED):
        text = pattern.sub(_mask_match, text)
    return text


def _mask_match(m: re.Match) -> str:
    name = m.groupdict().get("name")
    if name and _PUBLIC_KEY.search(name):  # "page_token": "b" is no secret
        return m.group(0)
    return m.group("head") + MASK


def redact_value(key: str, value: Any) -> str:
    """How a property shows: masked entirely if its key names a secret, else its text redacted."""
    if is_secret_key(key):
        return MASK
    return redact_text(str(value))


def redact_mapping(values: Mapping[str, Any]) -> dict[str, str]:
    return {k: redact_value(k, v) for k, v in values.items()}


def redact_tree(value: Any, key: str = "") -> Any:
    """Every mapping inside ``value`` masked by key, every string redacted; other
    values (numbers, booleans, None) keep their type (for JSON output)."""
    if isinstance(value, Mapping):
        return {k: redact_tree(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_tree(v, key) for v in value]
    if value is None:
        return None
    if key and is_secret_key(key):
        return MASK
    return redact_text(value) if isinstance(value, str) else value


class Scrubber:
    """Removes known secret values from text (then applies :func:`redact_text`).

    :meth:`learn` takes a configuration: the values of secret-named keys, URI
    passwords and secret-named parameters inside any value become known secrets,
    masked wherever a message quotes them.
    """

    MIN_LENGTH = 4  # shorter values would mangle ordinary words

    def __init__(self) -> None:
        self.values: set[str] = set()

    def learn(self, properties: Mapping[str, Any]) -> None:
        for key, value in properties.items():
            if not isinstance(value, str):
                continue
            found: Iterable[str] = [value] if is_secret_key(key) else []
            found = [*found, *(m.group("secret") for p in (_URI_PASSWORD, _PARAM, _QUOTED) for m in p.finditer(value)
                               if m.group(0) != _mask_match(m))]
            self.values.update(v for v in found if len(v) >= self.MIN_LENGTH)

    def known(self, text: str) -> str:
        """Only the known values masked (for data, e.g. table rows, which no pattern may touch)."""
        for value in sorted(self.values, key=len, reverse=True):
            text = text.replace(value, MASK)
        return text

    def __call__(self, text: str) -> str:
        return redact_text(self.known(text))


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in the message and the formatted traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact_text(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = redact_text(record.exc_text)
        # Formatters print exc_text; some (JSON ones, e.g. pyspark's, whose logger class other
        # code may install process-wide) format exc_info themselves and would quote the raw
        # exception: only the masked text is left to them.
        record.exc_info = None
        return True
