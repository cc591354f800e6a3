"""Lance dataset helpers shared by every backend's data operations.

A namespace only knows a table's location; these helpers open it (at a
version or tag), move Arrow data in and out as IPC bytes, delete a table
directory, and translate pylance's exceptions into spec error codes.
Opening a table at a version, tag or branch and DescribeTable's detailed
metadata live in :mod:`lance_ns.detail`, locations in :mod:`lance_ns.storage`.
"""

from __future__ import annotations

import contextlib
import errno
import io
import re
import struct

import pyarrow as pa

from .base import is_panic
from .errors import (
    ConcurrentModificationError,
    InternalError,
    InvalidInputError,
    LanceNamespaceError,
    PayloadTooLargeError,
    PermissionDeniedError,
    TableAlreadyExistsError,
    TableNotFoundError,
    TableSchemaValidationError,
    TableTagNotFoundError,
    TableVersionNotFoundError,
    UnsupportedOperationError,
)
from .storage import delete_location, is_unreachable, unreachable_error


def translate(exc: BaseException, location: str = "") -> LanceNamespaceError:
    """A pylance / pyarrow exception -> the spec error with the closest code.

    pylance raises plain ValueError/OSError/RuntimeError with Rust messages,
    so the message is all there is to go on.  Input Lance refuses (a filter
    that does not parse, a column the table lacks, a tag name it does not
    allow, a schema it cannot store) is invalid input, code 13.
    """
    if isinstance(exc, LanceNamespaceError):
        return exc
    if is_unreachable(exc):
        return unreachable_error(exc, location)
    text = str(exc)
    low = text.lower()
    where = f" ({location})" if location else ""
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        return InvalidInputError(f"a name is too long for the storage{where}")
    if is_panic(exc):
        return InternalError(f"Lance failed unexpectedly{where}: {text.splitlines()[0] if text else ''}")
    if "dataset already exists" in low:  # a create that lost to another writer
        return TableAlreadyExistsError(f"table already exists{where}: {text}")
    if low.startswith("dataset at path") and "not found" in low:  # names "_versions": check first
        return TableNotFoundError(f"no Lance table{where}: {text}")
    if "no field named" in low or ("column" in low and ("not found" in low or "does not exist" in low)) or (
        "not found in schema" in low
    ):
        # the spec allows TableColumnNotFound or InvalidInput; a missing column is bad input here
        return InvalidInputError(text)
    if "tag" in low and ("not found" in low or "does not exist" in low):
        return TableTagNotFoundError(text)
    if "version" in low and ("not found" in low or "does not exist" in low):
        return TableVersionNotFoundError(text)
    if any(s in low for s in _USER_ERRORS):
        return InvalidInputError(text)
    if "unsupported: " in low or "not supported: " in low:  # what Lance itself cannot do
        return UnsupportedOperationError(_RUST_SOURCE.sub("", text.splitlines()[0]))
    if "dataset" in low and ("not found" in low or "does not exist" in low):
        return TableNotFoundError(f"no Lance table{where}: {text}")
    if "schema" in low and ("match" in low or "compatib" in low or "differ" in low):
        return TableSchemaValidationError(text)
    if "lacked the necessary privileges" in low or "accessdenied" in low.replace(" ", ""):
        # the storage refused the write or read (an S3 403): the caller's rights, not a bug here
        return PermissionDeniedError(f"the storage refused access{where}: {text.splitlines()[0]}")
    if "conflict" in low or "retryable" in low:
        return ConcurrentModificationError(text)
    if isinstance(exc, (ValueError, TypeError, OverflowError, pa.ArrowInvalid, pa.ArrowTypeError, KeyError)):
        return InvalidInputError(text)
    return InternalError(f"{type(exc).__name__}: {text}")


#: where in Lance's Rust source an error was raised (", src/namespace.rs:1569:18"): no news to a caller
_RUST_SOURCE = re.compile(r",\s*\S+\.rs:\d+:\d+\s*$")
#: message fragments of Lance errors about the caller's input (often raised as OSError)
_USER_ERRORS = ("invalid user input", "ref is invalid", "unsupported data type", "lanceerror(schema)")


@contextlib.contextmanager
def translated(location: str = ""):
    """Run pylance calls, re-raising their errors (and panics) with spec codes."""
    try:
        yield
    except LanceNamespaceError:
        raise
    except Exception as e:  # noqa: BLE001 - translated, never swallowed
        raise translate(e, location) from e
    except BaseException as e:
        if is_panic(e):  # not an Exception: it would escape every ``except Exception``
            raise translate(e, location) from e
        raise


#: Lance (arrow-rs) panics on buffers that are not aligned for their type, and an
#: IPC stream only aligns buffers to 8 bytes (a decimal128 buffer needs 16): the
#: reader copies every buffer that is not 64-byte aligned into fresh memory.
_READ_OPTIONS = pa.ipc.IpcReadOptions(ensure_alignment=pa.ipc.Alignment.At64Byte)
_FILE_MAGIC = b"ARROW1"


def sql_string(value: str) -> str:
    """``value`` as a string literal of Lance's SQL (a filter, a delete's predicate)."""
    return "'" + value.replace("'", "''") + "'"


def ipc_to_table(data: bytes | bytearray | memoryview | None, max_decoded_bytes: int | None = None,
                 *, file_format: bool = True) -> pa.Table:
    """Arrow IPC bytes -> a table that Lance can store, or code 13 before anything is written.

    The stream format (and, with ``file_format``, the file format) is read with
    every buffer aligned, the decoded size is bounded before any buffer is
    decompressed (a few KB of zstd can declare gigabytes), and the data is fully
    validated: UTF-8, offsets, dictionary indices, column names (non-empty and
    unique at every level) and types Lance can store.

    A table is returned as it is: the REST server's pipeline decodes and checks a body
    once, here, and hands our backends the table (it is not decoded twice).
    """
    if isinstance(data, pa.Table):
        return data
    if not data:
        raise InvalidInputError("request body must be Arrow IPC stream data")
    buf = pa.py_buffer(data)
    is_file = file_format and buf.size >= 8 and buf[:6].to_pybytes() == _FILE_MAGIC
    # the file format is the stream format between an 8-byte magic and a footer
    check_decoded_size(buf.slice(8) if is_file else buf, max_decoded_bytes)
    try:
        if is_file:
            table = pa.ipc.open_file(buf, options=_READ_OPTIONS).read_all()
        else:
            table = pa.ipc.open_stream(buf, options=_READ_OPTIONS).read_all()
    except (pa.ArrowException, ValueError, OSError) as e:
        raise InvalidInputError(f"request body is not Arrow IPC data: {e}") from None
    check_table(table)
    return table


def check_table(table: pa.Table) -> None:
    """Refuse data Lance would store but could not read back, or would panic on."""
    _check_names(table.schema, "")
    try:
        table.validate(full=True)
    except (pa.ArrowException, ValueError) as e:
        raise InvalidInputError(f"invalid Arrow data: {e}") from None
    try:
        from lance.schema import LanceSchema

        LanceSchema.from_pyarrow(table.schema)
    except ImportError:  # pragma: no cover - pylance is a dependency
        pass
    except (ValueError, TypeError, OSError) as e:
        raise InvalidInputError(f"Lance cannot store this schema: {str(e).splitlines()[0]}") from None


def _check_names(fields, parent: str) -> None:
    seen = set()
    for field in fields:
        where = f"{parent}{field.name}"
        if not field.name:
            inside = f"inside {parent[:-1]!r}" if parent else "at the top level"
            raise InvalidInputError(f"column names must not be empty (a column {inside})")
        if field.name in seen:
            raise InvalidInputError(f"duplicate column name {where!r}")
        seen.add(field.name)
        children = _child_fields(field.type)
        if children:
            _check_names(children, where + ".")


def _child_fields(t: pa.DataType) -> list:
    """The named fields inside a column's type (a struct's, also inside lists of structs)."""
    while pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        t = t.value_type
    return list(t) if pa.types.is_struct(t) else []


def check_decoded_size(stream: pa.Buffer, limit: int | None) -> int:
    """The total size the IPC stream's batches declare once decoded; over ``limit`` is refused.

    Read from the message headers, without decompressing anything: for a
    compressed buffer the first 8 bytes hold its uncompressed length.
    """
    total = 0
    try:
        reader = pa.ipc.MessageReader.open_stream(stream)
        for message in reader:
            total += _declared_size(message)
            if limit is not None and total > limit:
                raise PayloadTooLargeError(f"the Arrow data decodes to more than the limit of {limit} bytes")
    except (pa.ArrowException, ValueError, OSError, struct.error, IndexError) as e:
        raise InvalidInputError(f"request body is not Arrow IPC data: {e}") from None
    return total


# -- the few flatbuffer fields of an IPC message header the size check needs -------------
# Message{version, header_type, header, bodyLength}; DictionaryBatch{id, data: RecordBatch};
# RecordBatch{length, nodes, buffers: [Buffer{offset: i64, length: i64}], compression}.
_DICTIONARY_BATCH, _RECORD_BATCH = 2, 3


def _fb_table(buf, pos: int):
    """A flatbuffer table at ``pos`` -> field(i): the absolute position of field i, or None."""
    vtable = pos - struct.unpack_from("<i", buf, pos)[0]
    vsize = struct.unpack_from("<H", buf, vtable)[0]

    def field(i: int) -> int | None:
        entry = 4 + 2 * i
        if entry >= vsize:
            return None
        off = struct.unpack_from("<H", buf, vtable + entry)[0]
        return pos + off if off else None

    return field


def _fb_deref(buf, at: int) -> int:
    return at + struct.unpack_from("<I", buf, at)[0]


def _declared_size(message) -> int:
    meta = message.metadata.to_pybytes()
    msg = _fb_table(meta, _fb_deref(meta, 0))
    kind_at, header_at = msg(1), msg(2)
    if kind_at is None or header_at is None:
        return 0
    kind = meta[kind_at]
    if kind == _DICTIONARY_BATCH:
        data_at = _fb_table(meta, _fb_deref(meta, header_at))(1)
        if data_at is None:
            return 0
        batch = _fb_table(meta, _fb_deref(meta, data_at))
    elif kind == _RECORD_BATCH:
        batch = _fb_table(meta, _fb_deref(meta, header_at))
    else:
        return 0
    buffers_at = batch(2)
    if buffers_at is None:
        return 0
    compressed = batch(3) is not None
    vector = _fb_deref(meta, buffers_at)
    body = message.body
    total = 0
    for i in range(struct.unpack_from("<I", meta, vector)[0]):
        offset, length = struct.unpack_from("<qq", meta, vector + 4 + 16 * i)
        if length < 0:
            raise ValueError("negative buffer length")
        if not compressed or length < 8:
            total += length
        else:
            (raw,) = struct.unpack_from("<q", body, offset)  # -1: stored uncompressed
            if raw < -1:
                raise ValueError("negative uncompressed buffer length")
            total += length - 8 if raw == -1 else raw
    return total


def ipc_stream_bytes(data) -> bytes | None:
    """An Arrow body as IPC stream bytes: bytes as given, or the table the REST server decoded
    (what it hands the lance-ns backends it serves) written as a stream; None stays None.
    For whoever passes a body on to one that takes bytes (a REST client, a namespace not ours)."""
    if data is None or isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    return table_to_ipc_stream(data)


def table_to_ipc_stream(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def table_to_ipc_file(table: pa.Table) -> bytes:
    """Results -> Arrow IPC *file* bytes (what QueryTable returns)."""
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


# -- implementation-managed tables: staging manifest -> published version ---------------
#: Lance's manifest naming schemes (``naming_scheme`` of CreateTableVersion)
_V2_BASE = (1 << 64) - 1


def manifest_name(version: int, naming_scheme: str | None = "V2") -> str:
    """The file name of ``version``'s manifest in ``_versions/`` (V2: inverted, zero-padded)."""
    if (naming_scheme or "V2").upper() == "V1":
        return f"{version}.manifest"
    if (naming_scheme or "V2").upper() != "V2":
        raise InvalidInputError(f"unknown naming_scheme {naming_scheme!r} (V1 or V2)")
    return f"{_V2_BASE - version:020d}.manifest"


def _manifest_version(name: str) -> int | None:
    """The version a ``_versions/`` file name holds (None: not a manifest)."""
    stem, dot, ext = name.rpartition(".")
    if ext != "manifest" or not stem.isdigit():
        return None
    n = int(stem)
    return _V2_BASE - n if len(stem) == 20 else n


def object_store_path(location: str) -> str:
    """A location as Lance's object store names it: the path inside its bucket, without
    the leading slash (``/data/t.lance`` -> ``data/t.lance``, ``s3://b/p/t.lance`` -> ``p/t.lance``)."""
    from urllib.parse import urlparse

    from .storage import is_uri

    return (urlparse(location).path if is_uri(location) else location).strip("/")


def staged_manifest(location: str, manifest_path: str) -> str:
    """The staging manifest a commit names, as a location inside the table's ``_versions/``.

    A client may only hand over a file of the table itself: anything else (another
    table's file, ``..``) is refused, so CreateTableVersion never reads foreign data.
    """
    from .storage import join

    prefix = object_store_path(location) + "/_versions/"
    path = (manifest_path or "").lstrip("/")
    name = path[len(prefix):] if path.startswith(prefix) else ""
    if not name or "/" in name or name in (".", ".."):
        raise InvalidInputError(
            f"manifest_path {manifest_path!r} is not a staging manifest in the table's _versions/ ({prefix})"
        )
    return join(location, "_versions", name)


def _read_bytes(location: str, opts: dict | None) -> bytes | None:
    from .storage import filesystem

    fs, path = filesystem(location, opts)
    try:
        with fs.open_input_stream(path) as f:
            return f.read()
    except (FileNotFoundError, OSError) as e:
        if isinstance(e, FileNotFoundError) or "not found" in str(e).lower() or "no such" in str(e).lower():
            return None
        raise


def _write_bytes(location: str, opts: dict | None, data: bytes) -> None:
    """Write ``location`` in one step: a reader sees the old file or the new one, never a
    part (a manifest read half-written fails its open with "Invalid range 0..0", and
    pylance takes a table it cannot open for a new one).  A PUT to an object store is
    one step already; on local disk the bytes go to a file beside it, then a rename."""
    import os

    from .storage import filesystem

    fs, path = filesystem(location, opts)
    if fs.type_name == "local":
        tmp = f"{path}.{os.getpid()}-{os.urandom(4).hex()}.tmp"
        try:
            with open(tmp, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return
    with fs.open_output_stream(path) as out:
        out.write(data)


def _set_aside(location: str, opts: dict | None, data: bytes) -> None:
    """Keep a manifest the namespace never published under a name Lance ignores
    (recoverable by hand, invisible to readers), then remove it from its place."""
    import uuid

    _write_bytes(f"{location}-unpublished-{uuid.uuid4().hex[:8]}", opts, data)
    delete_location(location, opts)


def publish_manifest(location: str, opts: dict | None, staging: str, version: int,
                     naming_scheme: str | None) -> str:
    """Copy a staging manifest to ``version``'s place in ``_versions/``; its object-store path.

    Called only once the namespace granted ``version`` to this commit, so
    whatever sits at that place is no published version: a file written there by
    a writer bypassing the namespace is set aside (see :func:`_set_aside`).
    """
    from .storage import join

    data = _read_bytes(staging, opts)
    if data is None:
        raise InvalidInputError(f"staging manifest {staging!r} does not exist")
    final = join(location, "_versions", manifest_name(version, naming_scheme))
    existing = _read_bytes(final, opts)
    if existing is not None and existing != data:
        _set_aside(final, opts, existing)
    if existing != data:
        _write_bytes(final, opts, data)
    return object_store_path(final)


def manifest_in_place(location: str, opts: dict | None, record: dict) -> bool:
    """Whether a published version's manifest (a TableVersion dict) is at its place in
    ``_versions/`` (its size as recorded, where the record has one)."""
    import pyarrow.fs as pafs

    from .storage import filesystem, join

    name = str(record["manifest_path"]).rstrip("/").rsplit("/", 1)[-1]
    fs, path = filesystem(join(location, "_versions", name), opts)
    info = fs.get_file_info(path)
    size = record.get("manifest_size")
    return info.type == pafs.FileType.File and (size is None or info.size == size)


def manifest_exists(location: str, opts: dict | None, version: int) -> bool:
    """Whether ``_versions/`` holds a manifest of ``version`` (under either naming scheme)."""
    import pyarrow.fs as pafs

    from .storage import filesystem, join

    for scheme in ("V2", "V1"):
        fs, path = filesystem(join(location, "_versions", manifest_name(version, scheme)), opts)
        if fs.get_file_info(path).type == pafs.FileType.File:
            return True
    return False


def set_aside_unpublished(location: str, opts: dict | None, is_published) -> list[int]:
    """Set aside every manifest in ``_versions/`` whose version ``is_published(v)`` denies;
    the versions set aside.  Lance numbers a new commit after the newest manifest in
    storage, so a namespace commit after a bypass write would build on it."""
    import pyarrow.fs as pafs

    from .storage import filesystem, join

    fs, path = filesystem(join(location, "_versions"), opts)
    moved = []
    for info in fs.get_file_info(pafs.FileSelector(path, allow_not_found=True)):
        name = info.path.rstrip("/").rsplit("/", 1)[-1]
        v = _manifest_version(name)
        if info.type != pafs.FileType.File or v is None or is_published(v):
            continue
        data = _read_bytes(join(location, "_versions", name), opts)
        if data is not None:
            _set_aside(join(location, "_versions", name), opts, data)
            moved.append(v)
    if moved:  # Lance's hint of the latest version may name a version just set aside
        delete_location(join(location, "_versions", "latest_version_hint.json"), opts)
    return sorted(moved)


# -- storage-managed tables: versions as files in _versions/ -------------------------------------
def manifest_versions(location: str, opts: dict | None) -> list[int]:
    """The versions whose manifests are in ``_versions/``, ascending."""
    import pyarrow.fs as pafs

    from .storage import filesystem, join

    fs, path = filesystem(join(location, "_versions"), opts)
    names = (i.path.rstrip("/").rsplit("/", 1)[-1] for i in fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
             if i.type == pafs.FileType.File)
    return sorted(v for v in map(_manifest_version, names) if v is not None)


def latest_manifest_version(location: str, opts: dict | None) -> int:
    """The newest version in ``_versions/`` (0: none)."""
    versions = manifest_versions(location, opts)
    return versions[-1] if versions else 0


def file_size(location: str, opts: dict | None) -> int | None:
    from .storage import filesystem

    fs, path = filesystem(location, opts)
    return fs.get_file_info(path).size


def put_manifest(location: str, staging: str, version: int, naming_scheme: str | None, opts: dict | None,
                 table: str) -> None:
    """Put a staging manifest at ``version``'s place only if that place is free (the
    commit of a storage-managed table: of racing commits of one version exactly one
    lands); the same manifest again is no conflict."""
    from .storage import join, put_if_absent

    data = _read_bytes(staging, opts)
    if data is None:
        raise InvalidInputError(f"staging manifest {staging!r} does not exist")
    final = join(location, "_versions", manifest_name(version, naming_scheme))
    if not put_if_absent(final, data, opts):
        if _read_bytes(final, opts) != data:
            raise ConcurrentModificationError(f"version {version} of table {table!r} already exists")
        return
    # Lance's hint of the latest version would name the one before ours
    delete_location(join(location, "_versions", "latest_version_hint.json"), opts)


def delete_manifest(location: str, opts: dict | None, version: int) -> None:
    """Remove ``version``'s manifest (either naming scheme) from ``_versions/``."""
    from .storage import join

    for scheme in ("V2", "V1"):
        delete_location(join(location, "_versions", manifest_name(version, scheme)), opts)
