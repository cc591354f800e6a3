"""Resolve Spark options to a Lance table: a location plus storage options.

Options follow the spec's tool-integration guidelines:

* ``impl`` names the namespace implementation and ``<impl>.*`` keys carry its
  properties (``dir.root``, ``rest.uri``, ...); or ``namespace`` names a
  configuration of ``lance_ns.load_namespace``;
* with a namespace, the table is an identifier: ``load("db.events")`` (Spark
  passes it as ``path``) or the ``table`` option, split by ``delimiter``
  (default ``.``);
* without one, ``path`` is the table's URI;
* ``storage.*`` keys are pylance storage options (they override what the
  namespace vends).

Only strings, lists and dicts live in a :class:`TableRef`: it is pickled to
Spark's Python workers and lance objects are not fork-safe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from .errors import error

STORAGE_PREFIX = "storage."


@dataclass(frozen=True)
class TableRef:
    uri: str
    storage_options: dict[str, str] = field(default_factory=dict)
    table_id: list[str] | None = None  # set when resolved through a namespace
    ns_config: dict[str, str] | None = None  # flat config to reconnect with

    def open(self, version: int | str | None = None):
        import lance

        return lance.dataset(self.uri, version=version, storage_options=self.storage_options or None)

    def exists(self) -> bool:
        return latest_version(self) is not None

    def namespace(self):
        from ..config import from_config

        return from_config(self.ns_config) if self.ns_config else None


def _options(options: Mapping[str, str]) -> dict[str, str]:
    # Spark hands a case-insensitive dict; keep plain str -> str.
    return {str(k): str(v) for k, v in dict(options).items() if v is not None}


def namespace_config(options: Mapping[str, str]) -> dict[str, str] | None:
    """The flat namespace config in ``options`` (``impl`` + prefixed keys)."""
    opts = _options(options)
    impl = opts.get("impl")
    if impl:
        # Spark lower-cases option keys; match the impl prefix (which may be
        # a class name) regardless of case.
        prefix = impl.rsplit(":", 1)[-1].rsplit(".", 1)[-1] if "." in impl or ":" in impl else impl
        for key in list(opts):
            if key.lower().startswith(prefix.lower() + ".") and not key.startswith(prefix + "."):
                opts[prefix + key[len(prefix) :]] = opts.pop(key)
        return opts
    if opts.get("namespace"):
        from ..config import named_config

        return named_config(opts["namespace"])
    return None


def storage_options(options: Mapping[str, str]) -> dict[str, str]:
    return {k[len(STORAGE_PREFIX) :]: v for k, v in _options(options).items() if k.startswith(STORAGE_PREFIX)}


def table_identifier(options: Mapping[str, str]) -> list[str]:
    opts = _options(options)
    ident = opts.get("table") or opts.get("path")
    if not ident:
        raise error("InvalidInputError", "no table given: use load('db.table') or the 'table' option")
    from ..identifiers import parse_id

    return parse_id(ident, opts.get("delimiter", "."))


def resolve(options: Mapping[str, str], create: bool = False) -> tuple[TableRef, bool]:
    """The table the options name, and whether this call declared it.

    With ``create``, a table missing from the namespace is declared there
    (``declare_table`` chooses its location) so the caller can write it.
    """
    extra = storage_options(options)
    config = namespace_config(options)
    if config is None:
        uri = _options(options).get("path")
        if not uri:
            raise error("InvalidInputError", "give either 'impl' (or 'namespace') with a table identifier, or a 'path'")
        return TableRef(uri=uri, storage_options=extra), False

    from lance_namespace import DeclareTableRequest, DescribeTableRequest

    from ..config import from_config
    from ..errors import TableNotFoundError

    ns = from_config(config)
    table_id = table_identifier(options)
    declared = False
    try:
        resp = ns.describe_table(DescribeTableRequest(id=table_id))
    except TableNotFoundError:
        if not create:
            raise
        resp = ns.declare_table(DeclareTableRequest(id=table_id))
        declared = True
    if not resp.location:
        raise error("InvalidInputError", f"namespace gave no location for table {table_id}")
    opts = dict(resp.storage_options or {})
    opts.update(extra)
    return TableRef(uri=resp.location, storage_options=opts, table_id=table_id, ns_config=config), declared


def latest_version(ref: TableRef) -> int | None:
    """The table's latest version, or None when no version was committed yet
    (a declared table, or an empty location)."""
    try:
        return ref.open().version
    except ValueError as e:  # pylance's "Dataset at path ... was not found"
        if "not found" in str(e).lower():
            return None
        raise
