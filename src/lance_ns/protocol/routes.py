"""The one route table of the Lance REST protocol.

Derived, not written out: every operation of :data:`lance_ns.base.OPERATIONS`
is matched by its OperationId to the path, method, parameters and body kinds
of the OpenAPI document shipped beside this module (a copy of the published
``lance-namespace-rest.yaml``).  The server, the REST client and the
conformance checker all read this table, so they cannot disagree about where
a field travels.
"""

from __future__ import annotations

import functools
import json
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..base import BY_OP_ID, OPERATIONS, Operation
from ..errors import InvalidInputError
from ..modes import parse_bool

OPENAPI_PATH = Path(__file__).with_name("openapi.yaml")

ARROW_STREAM = "application/vnd.apache.arrow.stream"
ARROW_FILE = "application/vnd.apache.arrow.file"
JSON = "application/json"

#: request ``context`` entries of lance-ns that travel as HTTP headers: most request
#: models have no field for them (DropTableRequest has no properties), and clients
#: (pylance's RestNamespace, ours) send only ``header.*`` context entries, as headers.
#: The client sends ``context["purge"]`` as ``x-lance-ns-purge``; the server puts the
#: header back into the request's context before the backend sees it.
CONTEXT_HEADERS = {"purge": "x-lance-ns-purge"}


@dataclass(frozen=True)
class Param:
    name: str
    location: str  # "path" or "query"
    kind: str  # how the string travels: "str", "bool", "int", "json" (a map), "list" (repeated)


@dataclass(frozen=True)
class Route:
    op: Operation
    method: str  # "GET" or "POST"
    path: str  # e.g. "/v1/table/{id}/describe"
    params: tuple[Param, ...]  # besides ``delimiter``
    body: str | None  # "json", "arrow" or None (no body)
    response: str  # "json" (a model), "count" (bare int), "text" (bare string), "arrow" (IPC file)
    status: int  # the success status
    #: the request field that *is* the JSON body, when the document's body is a bare map
    #: (UpdateTableSchemaMetadata), and likewise the response field the response body is
    body_field: str | None = None
    response_field: str | None = None

    # cached: every request asks (a frozen dataclass still has the __dict__ they go to)
    @functools.cached_property
    def has_id(self) -> bool:
        return "{id}" in self.path

    @functools.cached_property
    def query_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.location == "query")

    @functools.cached_property
    def path_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.location == "path" and p.name != "id")


@functools.lru_cache(maxsize=1)
def openapi_document() -> dict:
    # libyaml's loader when present: 10x faster than the pure-Python one here
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(OPENAPI_PATH.read_text(), Loader=loader)


@functools.lru_cache(maxsize=1)
def openapi_text() -> str:
    return OPENAPI_PATH.read_text()


def _field_kind(model: type, name: str) -> str:
    """How a query parameter is parsed, from the request model's field type."""
    ann = model.model_fields[name].annotation
    for t in _flatten(ann):
        origin = typing.get_origin(t)
        if t is bool:
            return "bool"
        if t is int:
            return "int"
        if origin in (dict, typing.Dict) or t is dict:
            return "json"
        if origin in (list, typing.List) or t is list:
            return "list"
    return "str"


def _flatten(ann: Any):
    """Unwrap Optional/Annotated/Union to the concrete types inside."""
    origin = typing.get_origin(ann)
    if origin is typing.Annotated:
        yield from _flatten(typing.get_args(ann)[0])
    elif origin is typing.Union or str(origin) == "types.UnionType":
        for a in typing.get_args(ann):
            if a is not type(None):
                yield from _flatten(a)
    else:
        yield ann


def _response_kind(doc: dict, op: dict) -> tuple[str, int]:
    for status, resp in op["responses"].items():
        if str(status).startswith("2"):
            if "$ref" in resp:
                resp = doc["components"]["responses"][resp["$ref"].rsplit("/", 1)[-1]]
            content = resp.get("content", {})
            if ARROW_FILE in content:
                return "arrow", int(status)
            schema = content.get(JSON, {}).get("schema", {})
            if schema.get("type") == "integer":
                return "count", int(status)
            if schema.get("type") == "string":
                return "text", int(status)
            return "json", int(status)
    return "json", 200


def _response_schema(doc: dict, op: dict) -> dict:
    for status, resp in op["responses"].items():
        if str(status).startswith("2"):
            if "$ref" in resp:
                resp = doc["components"]["responses"][resp["$ref"].rsplit("/", 1)[-1]]
            return resp.get("content", {}).get(JSON, {}).get("schema", {})
    return {}


#: fields that never travel in a bare-map body (the path, headers, or a wrapper-only option)
_NOT_THE_MAP = {"identity", "context", "id", "branch", "transaction_id"}


def _bare_map_field(model: type, schema: dict) -> str | None:
    """The model field a bare-map JSON body stands for (the document's "REST NAMESPACE
    ONLY: a direct object" operations), or None for the usual wrapped model."""
    if "$ref" in schema or schema.get("type") != "object" or "additionalProperties" not in schema:
        return None
    candidates = [name for name in model.model_fields if name not in _NOT_THE_MAP]
    if len(candidates) != 1:
        raise RuntimeError(f"{model.__name__}: cannot tell which field the bare-map body is")
    return candidates[0]


def _build() -> dict[str, Route]:
    doc = openapi_document()
    shared = doc["components"]["parameters"]
    routes: dict[str, Route] = {}
    for path, item in doc["paths"].items():
        common = item.get("parameters", [])
        for method, spec in item.items():
            if method == "parameters":
                continue
            op = BY_OP_ID[spec["operationId"]]
            params = []
            for raw in common + spec.get("parameters", []):
                p = shared[raw["$ref"].rsplit("/", 1)[-1]] if "$ref" in raw else raw
                if p["name"] == "delimiter":
                    continue
                kind = _field_kind(op.request, p["name"]) if p["name"] in op.request.model_fields else "str"
                params.append(Param(p["name"], p["in"], kind))
            content = spec.get("requestBody", {}).get("content", {})
            body = "arrow" if ARROW_STREAM in content else "json" if JSON in content else None
            response, status = _response_kind(doc, spec)
            body_field = _bare_map_field(op.request, content.get(JSON, {}).get("schema", {}))
            response_field = _bare_map_field(op.response, _response_schema(doc, spec)) if op.response else None
            routes[op.method] = Route(op, method.upper(), path, tuple(params), body, response, status,
                                      body_field, response_field)
    missing = set(OPERATIONS) - set(routes)
    if missing:  # the interface and the document drifted apart
        raise RuntimeError(f"operations without a REST route: {sorted(missing)}")
    return routes


#: method name -> Route, one per operation.
ROUTES: dict[str, Route] = _build()


# -- query parameter (de)serialisation, shared by server and client -------------



def parse_query_value(param: Param, values: list[str]) -> Any:
    """The query string value(s) of a parameter -> the request model's value."""
    if param.kind == "list":
        return list(values)
    raw = values[-1]
    try:
        if param.kind == "bool":
            return parse_bool(raw, f"query parameter {param.name!r}")
        if param.kind == "int":
            return int(raw)
        if param.kind == "json":
            value = json.loads(raw)
            if not isinstance(value, dict):
                raise ValueError("expected a JSON object")
            return value
    except ValueError as e:
        raise InvalidInputError(f"query parameter {param.name!r}: {e}") from None
    except RecursionError:
        raise InvalidInputError(f"query parameter {param.name!r}: nested too deeply") from None
    return raw


def format_query_value(param: Param, value: Any) -> list[str]:
    """A request model value -> its query string value(s)."""
    if param.kind == "list":
        return [str(v) for v in value]
    if param.kind == "bool":
        return ["true" if value else "false"]
    if param.kind == "json":
        return [json.dumps(value, separators=(",", ":"))]
    return [str(value)]
