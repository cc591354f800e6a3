"""The ``lance`` source's options, parsed once into :class:`SourceOptions`.

Every reader of options uses this: the Python source (``datasource``), the
JVM read path's worker (``bridge_worker``), ``register_views`` and
``count``, so an option has one name, one check and one meaning everywhere.

Spark hands the Python source a case-insensitive mapping and the JVM one
with the user's spelling; option names are matched regardless of case.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Mapping

from ..impls import impl_prefix
from .errors import error

STORAGE_PREFIX = "storage."


def _plain(options: Mapping[str, object]) -> dict[str, str]:
    return {str(k): str(v) for k, v in dict(options).items() if v is not None}


def _impl_config(impl: str, opts: dict[str, str]) -> dict[str, str]:
    """``impl`` plus its properties, the keys prefixed as ``impl`` spells
    them (Spark lower-cases option keys; the impl may be a class name).
    Only these keys: the config is also the connection cache's key."""
    config = {"impl": impl}
    for prefix in sorted({impl, impl_prefix(impl)}, key=len, reverse=True):
        for key, value in opts.items():
            if key.lower().startswith(prefix.lower() + "."):
                config.setdefault(prefix + key[len(prefix) :], value)
    return config


def prefixed_config(impl: str, properties: Mapping[str, str]) -> dict[str, str]:
    """``impl`` plus its properties as a flat tool config, from properties
    written without the impl prefix (``root``, as a named configuration or a
    Spark catalog spells them) or with it (``dir.root``); the prefixed
    spelling of a property wins, as in ``load_namespace``.  The one prefix
    rule of named configurations and of ``lancens.spark.LanceCatalog``."""
    prefix = impl_prefix(impl)
    config = {"impl": impl}
    for key, value in properties.items():
        if key != "impl" and not key.startswith(prefix + "."):
            config[f"{prefix}.{key}"] = value
    config.update({k: v for k, v in properties.items() if k.startswith(prefix + ".")})
    return config


def _named_config(name: str) -> dict[str, str]:
    """A named configuration as a flat tool config (see :func:`prefixed_config`)."""
    from ..config import named_config

    props = named_config(name)
    return prefixed_config(props.pop("impl"), props)


@dataclass(frozen=True)
class SourceOptions:
    """What the options of one read, write or view say.

    Where to find the table: ``ns_config`` (from ``impl`` + ``<impl>.*`` keys,
    or the named configuration ``namespace``) with ``table`` (the identifier,
    from ``table`` or the loaded path) -- or just ``path`` (the table's URI).
    """

    ns_config: dict[str, str] | None = None
    table: str | None = None
    delimiter: str = "."
    path: str | None = None
    storage: dict[str, str] = field(default_factory=dict)  # pylance storage options, over what a namespace vends
    # reads
    version: int | None = None
    tag: str | None = None
    filter: str | None = None  # Lance SQL, applied before any pushed filter
    columns: list[str] | None = None
    batch_size: int | None = None
    fragments_per_partition: int = 1
    # None: the read path's default (the JVM path pushes, the Python source
    # does not; see docs/spark.md for why they differ)
    push_filters: bool | None = None
    read_latest: bool = False
    # writes and streams
    max_rows_per_file: int | None = None
    data_storage_version: str | None = None
    starting_version: str | None = None
    ignore_changes: bool = False
    stream_id: str | None = None
    #: overwrite by replacing exactly this version's rows, failing with code 14
    #: if the table has a later version (the catalog's UPDATE / MERGE INTO)
    replace_version: int | None = None
    #: overwrite by deleting the rows this Lance SQL predicate matches and adding
    #: the new ones, in one commit (the catalog's overwrite(condition))
    replace_where: str | None = None
    #: a staged CTAS/RTAS of the catalog (:mod:`.staging`): the job's id; the job's
    #: commit is handed over to the catalog's commitStagedChanges instead of made
    stage: str | None = None
    #: the TBLPROPERTIES of the table a staged job writes (JSON): its vector columns
    table_properties: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, options: Mapping[str, object]) -> SourceOptions:
        opts = _plain(options)
        lower = {k.lower(): v for k, v in opts.items()}

        def text(key: str) -> str | None:
            value = lower.get(key.lower())
            return None if value is None or value == "" else value

        def integer(key: str, default: int | None = None) -> int | None:
            value = text(key)
            if value is None:
                return default
            try:
                return int(value)
            except ValueError:
                raise error("InvalidInputError", f"option {key!r} must be an integer, got {value!r}") from None

        def boolean(key: str, default: bool | None = False) -> bool | None:
            value = text(key)
            if value is None:
                return default
            # Spark's own boolean options: exactly true or false (and this module stays light
            # for Spark's Python workers: no lance_ns.modes, which brings lance_namespace)
            if value.lower() not in ("true", "false"):
                raise error("InvalidInputError", f"option {key!r} must be true or false, got {value!r}")
            return value.lower() == "true"

        def json_object(key: str) -> dict[str, str]:
            value = text(key)
            if value is None:
                return {}
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = None
            if not isinstance(parsed, dict):
                raise error("InvalidInputError", f"option {key!r} must be a JSON object, got {value!r}")
            return {str(k): str(v) for k, v in parsed.items()}

        if text("impl"):
            ns_config = _impl_config(text("impl"), opts)
        elif text("namespace"):
            ns_config = _named_config(text("namespace"))
        else:
            ns_config = None
        version, tag = integer("version"), text("tag")
        if version is not None and tag is not None:
            raise error("InvalidInputError", "give either 'version' or 'tag', not both")
        columns = None
        if text("columns") is not None:
            columns = [c.strip() for c in text("columns").split(",") if c.strip()]
            if not columns:
                raise error("InvalidInputError", "option 'columns' names no column")
        per_partition = integer("fragmentsPerPartition", 1)
        if per_partition < 1:
            raise error("InvalidInputError", f"option 'fragmentsPerPartition' must be at least 1, got {per_partition}")
        return cls(
            ns_config=ns_config,
            table=text("table") or (text("path") if ns_config is not None else None),
            delimiter=text("delimiter") or ".",
            path=text("path"),
            storage={k[len(STORAGE_PREFIX) :]: v for k, v in opts.items() if k.lower().startswith(STORAGE_PREFIX)},
            version=version,
            tag=tag,
            filter=text("filter"),
            columns=columns,
            batch_size=integer("batchSize"),
            fragments_per_partition=per_partition,
            push_filters=boolean("pushFilters", None),
            # a fixed version or tag is what it says, whatever readLatest asks
            read_latest=boolean("readLatest") and version is None and tag is None,
            max_rows_per_file=integer("maxRowsPerFile"),
            data_storage_version=text("dataStorageVersion"),
            starting_version=text("startingVersion"),
            ignore_changes=boolean("ignoreChanges"),
            stream_id=text("streamId") or text("checkpointLocation"),
            replace_version=integer("replaceVersion"),
            replace_where=text("replaceWhere"),
            stage=text("stage"),
            table_properties=json_object("tableProperties"),
        )

    def table_id(self) -> list[str]:
        """The table's identifier in the namespace."""
        if not self.table:
            raise error("InvalidInputError", "no table given: use load('db.table') or the 'table' option")
        from ..identifiers import parse_id

        return parse_id(self.table, self.delimiter)
