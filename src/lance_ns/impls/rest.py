"""The REST client backend (impl ``rest``): any Lance REST namespace server.

Every operation is generated from the one route table
(:data:`lance_ns.protocol.routes.ROUTES`), so the client sends each field where
the server reads it.  Properties (strings, like every impl):

* ``uri`` (required): the server's base URL, e.g. ``http://127.0.0.1:2333``;
* ``delimiter``: the string-id delimiter of the ``{id}`` path segment (``$``);
* ``header.NAME``: extra HTTP headers (per request: context entries
  ``header.NAME``; the context entry ``purge`` travels as ``x-lance-ns-purge``);
  ``auth_token``: sent as
  ``Authorization: Bearer ...``; ``api_key``: sent as ``x-api-key``;
* ``connect_timeout`` / ``read_timeout``: milliseconds (10000 / 60000);
* ``max_retries`` (3), ``retry_backoff_ms`` (100), ``retry_max_backoff_ms``
  (5000): exponential backoff with full jitter;
* TLS: ``tls.verify`` (true), ``tls.ssl_ca_cert`` (CA bundle path),
  ``tls.cert_file`` / ``tls.key_file`` (client certificate), also spelled
  ``tls.ca_cert``, ``tls.client_cert``, ``tls.client_key``.  Without a CA bundle or
  certificate, the server is verified against ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` or
  certifi's bundle, as httpx would, loaded once per process (:mod:`lance_ns.tls`);
* ``pool.max_connections`` (32): the size of the one pooled ``httpx.Client``;
* ``storage.KEY``: this client's own storage options (its credentials for the tables'
  object store, say), added to every answer's ``storage_options`` where the server's
  answer has no such key: a server never hands out its own credentials, so a pylance
  writing through this client brings its own here (vended ones win).

Retries never repeat a write that may have reached the server: connection
failures (nothing was sent) and 429/503 answers (the server refused) are
retried for every operation; read timeouts and broken connections only for
read-type operations.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import httpx
from lance_namespace import CountTableRowsResponse, QueryTableResponse

from .. import retry, tls
from ..base import NamespaceBase, normalising
from ..errors import (
    InvalidInputError,
    error_from_code,
    error_from_status,
)
from ..identifiers import REST_DELIMITER
from ..redact import redact_text
from ..protocol import routes as R

_READ_OPS = frozenset(
    {
        "count_table_rows",
        "query_table",
        "explain_table_query_plan",
        "analyze_table_query_plan",
        "namespace_exists",
        "table_exists",
    }
)


def is_read_op(method: str) -> bool:
    """Operations that change nothing, so repeating one is always safe."""
    return method in _READ_OPS or method.startswith(("list_", "describe_", "get_"))


#: refused before any work: safe to retry any request
_RETRY_STATUSES = (429, 503)


class RestNamespace(NamespaceBase):
    """A client of a Lance REST namespace server (properties: see the module docstring)."""

    def __init__(self, **properties: str):
        super().__init__(**properties)
        self.uri = self.prop("uri", required=True).rstrip("/")
        self.delimiter = self.prop("delimiter", REST_DELIMITER)
        if "/" in self.delimiter:  # a path segment cannot carry it (servers decode %2F before routing)
            raise InvalidInputError(f"delimiter {self.delimiter!r} cannot be used in REST paths")
        self.retry = retry.RetryPolicy.from_properties(self)
        headers = {k[len("header.") :]: v for k, v in self.properties.items() if k.startswith("header.")}
        if self.prop("auth_token"):
            headers["Authorization"] = f"Bearer {self.prop('auth_token')}"
        if self.prop("api_key"):
            headers["x-api-key"] = self.prop("api_key")
        connect = self.int_prop("connect_timeout", 10_000) / 1000
        read = self.int_prop("read_timeout", 60_000) / 1000
        pool = self.int_prop("pool.max_connections", 32, minimum=1)
        self._client = httpx.Client(
            base_url=self.uri,
            headers=headers,
            timeout=httpx.Timeout(connect=connect, read=read, write=read, pool=connect),
            limits=httpx.Limits(max_connections=pool, max_keepalive_connections=pool),
            verify=self._tls(),
        )

    def _tls(self):
        """One SSL context from the ``tls.*`` properties (httpx's ``verify``)."""
        ca = self.prop("tls.ssl_ca_cert") or self.prop("tls.ca_cert") or self.prop("tls.ca_bundle")
        cert = self.prop("tls.cert_file") or self.prop("tls.client_cert")
        key = self.prop("tls.key_file") or self.prop("tls.client_key")
        verify = self.bool_prop("tls.verify", True)
        if key and not cert:
            raise InvalidInputError("tls.key_file needs tls.cert_file")
        if verify and not (ca or cert):
            return tls.default_context()
        import ssl

        ctx = ssl.create_default_context(cafile=ca) if ca else ssl.create_default_context()
        if not verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if cert:
            ctx.load_cert_chain(cert, key)
        return ctx

    def namespace_id(self) -> str:
        return f"RestNamespace {{ uri: {redact_text(self.uri)!r}, delimiter: {self.delimiter!r} }}"

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "RestNamespace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- one generic call -----------------------------------------------------------
    def _invoke(self, route: R.Route, request: Any, data: Any = None) -> Any:
        fields = request.model_dump(by_alias=True, exclude_none=True, mode="json")
        path, params, content, headers = self.encode(route, fields, data)
        resp = self._send(route, path, params, content, headers)
        return self._result(route, resp)

    def encode(
        self, route: R.Route, fields: dict, data: bytes | None = None
    ) -> tuple[str, list[tuple[str, str]], bytes | None, dict[str, str]]:
        """A request's fields (JSON names) -> (path, query params, body, headers),
        each field where the route says the server reads it.  Nothing is checked."""
        fields = dict(fields)
        headers = {}
        context = fields.pop("context", None) or {}
        for key, value in context.items():  # the spec's Context -> HTTP headers mapping
            if key.startswith("header."):
                headers[key[len("header.") :]] = value
            elif key in R.CONTEXT_HEADERS:  # lance-ns context (purge): a header our server reads back
                headers[R.CONTEXT_HEADERS[key]] = value
        path = route.path
        if route.has_id:
            id_str = self.delimiter.join(fields.get("id") or []) or self.delimiter
            path = path.replace("{id}", _segment(id_str))
        for p in route.path_params:
            if p.name not in fields:
                raise InvalidInputError(f"{route.op.op_id} needs {p.name!r}")
            path = path.replace("{" + p.name + "}", _segment(str(fields.pop(p.name))))
        params: list[tuple[str, str]] = []
        if self.delimiter != REST_DELIMITER:
            params.append(("delimiter", self.delimiter))
        for p in route.query_params:
            if p.name in fields:
                params += [(p.name, v) for v in R.format_query_value(p, fields.pop(p.name))]
        content = None
        if route.body == "json":
            if route.body_field:  # the protocol's body is that field's value (a bare map)
                lost = sorted(k for k in fields if k not in (route.body_field, "id", "identity", "context"))
                if lost:
                    raise InvalidInputError(f"{route.op.op_id} over REST carries only {route.body_field!r}, not {lost}")
                fields = fields.get(route.body_field) or {}
            content = json.dumps(fields, separators=(",", ":")).encode()
            headers["Content-Type"] = R.JSON
        elif route.body == "arrow":
            # (a table our server decoded, where this client is a mount it serves: as a stream)
            from ..datasets import ipc_stream_bytes

            content = ipc_stream_bytes(data) or b""
            headers["Content-Type"] = R.ARROW_STREAM
        return path, params, content, headers

    def raw_request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Any = None,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> "RawResponse":
        """Send one request exactly as given: no validation, no retry, no error
        mapping (the checker's malformed-input probes).  The client's own
        headers (credentials) are sent; a header given as ``""`` is left out."""
        given = headers or {}
        request = self._client.build_request(
            method, path, json=json, params=params, content=content, headers={k: v for k, v in given.items() if v != ""}
        )
        for name in (k for k, v in given.items() if v == ""):  # e.g. Authorization: an anonymous request
            request.headers.pop(name, None)
        resp = self._client.send(request)
        return RawResponse(resp.status_code, resp.content, resp.headers.get("content-type", ""))

    def _send(self, route, path, params, content, headers) -> httpx.Response:
        return retry.send(
            self._client,
            self.retry,
            route.method,
            path,
            safe=is_read_op(route.op.method),
            retry_status=_RETRY_STATUSES.__contains__,
            what=f"{route.op.op_id} to {redact_text(self.uri)}",
            params=params,
            content=content,
            headers=headers,
        )

    def _result(self, route: R.Route, resp: httpx.Response) -> Any:
        if resp.status_code >= 400:
            raise _error(resp)
        if route.response == "arrow":
            return QueryTableResponse(data=resp.content)
        payload = resp.json() if resp.content else None
        if route.response == "count":
            count = payload.get("count") if isinstance(payload, dict) else payload
            return CountTableRowsResponse(count=int(count or 0))
        if route.response == "text":
            return payload if isinstance(payload, str) else resp.text
        model = route.op.response
        if model is None:
            return payload
        if route.response_field:
            payload = {route.response_field: payload}
        if self.storage_options and isinstance(payload, dict) and "location" in payload:
            # a table's answer (DescribeTable, DeclareTable, CreateTable...): our own options under the server's
            payload = {**payload, "storage_options": {**self.storage_options, **(payload.get("storage_options") or {})}}
        return model.from_dict(payload or {}) if hasattr(model, "from_dict") else model.model_validate(payload or {})


class RawResponse:
    """What :meth:`RestNamespace.raw_request` got back: status and body."""

    def __init__(self, status: int, content: bytes, content_type: str = ""):
        self.status = status
        self.content = content
        self.content_type = content_type

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body as JSON, or None when it is not JSON."""
        try:
            return json.loads(self.content) if self.content else None
        except ValueError:
            return None

    @property
    def code(self) -> int | None:
        """The integer ``code`` of an error body (None when absent or not an integer)."""
        body = self.json()
        code = body.get("code") if isinstance(body, dict) else None
        return code if isinstance(code, int) and not isinstance(code, bool) else None

    def error(self) -> Exception | None:
        """The exception this response stands for (None for a success)."""
        return _error_of(self.status, self.json(), self.text) if self.status >= 400 else None


def _segment(value: str) -> str:
    """A percent-encoded path segment; ``.`` and ``..`` are encoded too, since
    URL normalisation would otherwise remove them (the root id with delimiter ``.``)."""
    if value in (".", ".."):
        return value.replace(".", "%2E")
    return quote(value, safe="")



def _error(resp: httpx.Response) -> Exception:
    """An error response -> the exception for its ``code`` (else its status)."""
    try:
        body = resp.json()
    except ValueError:
        body = None
    return _error_of(resp.status_code, body, resp.text or resp.reason_phrase)


def _error_of(status: int, body: Any, text: str) -> Exception:
    if isinstance(body, dict):
        # any server's message may quote a secret: masked before it reaches logs or a CLI
        message = redact_text(str(body.get("error") or body.get("detail") or body.get("message") or text[:500]))
        code = body.get("code")
        if isinstance(code, int) and not isinstance(code, bool):
            return error_from_code(code, message)
        return error_from_status(status, message)
    return error_from_status(status, redact_text(text[:500]))


def _operation(route: R.Route):
    if route.op.has_data:

        def method(self, request, request_data: bytes = b""):
            return self._invoke(route, request, request_data)

    else:

        def method(self, request=None):
            return self._invoke(route, request)

    method.__name__ = route.op.method
    method.__doc__ = f"{route.op.op_id}: {route.method} {route.path}"
    return method


# Every operation of the interface, generated from the route table and given
# the base's request normalisation (dicts from pylance become models).
for _name, _route in R.ROUTES.items():
    setattr(RestNamespace, _name, normalising(_operation(_route), _route.op))
del _name, _route
