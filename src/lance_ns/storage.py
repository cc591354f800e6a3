"""Table locations on local disk or object storage.

Catalog backends store a location string; this module turns it into
something pylance / pyarrow can open, checks that it holds a Lance table, and
removes it on DropTable.  One place, so every backend treats locations alike.
"""

from __future__ import annotations

import contextlib
import logging
import os
import posixpath
import re
import time
from urllib.parse import unquote, urlparse

from .errors import InvalidInputError

log = logging.getLogger(__name__)


#: what object stores, pyarrow's AWS SDK and Lance's object_store say when the storage
#: cannot be reached at all (refused, timed out, no route, no name): the caller's
#: storage is down or out of reach (code 17), never a bug here
_UNREACHABLE = re.compile(
    r"network_connection|could not connect|failed to connect|connection refused|error trying to connect|"
    r"error sending request|dns error|failed to lookup address|name or service not known|"
    r"timed out|timeout was reached|connection reset|no route to host|network is unreachable",
    re.IGNORECASE,
)


def is_unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says the storage could not be reached (see _UNREACHABLE)."""
    return isinstance(exc, (OSError, ValueError, RuntimeError)) and bool(_UNREACHABLE.search(str(exc)))


def unreachable_error(exc: BaseException, location: str = ""):
    """The code-17 answer for an unreachable storage, naming the location and the cause."""
    from .errors import ServiceUnavailableError

    where = f" at {location!r}" if location else ""
    cause = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    return ServiceUnavailableError(f"the storage{where} cannot be reached: {cause[:300]}")


def is_uri(location: str) -> bool:
    if ":" not in location:  # the common local path, without urlparse (a bulk declare asks thousands of times)
        return False
    scheme = urlparse(location).scheme
    return len(scheme) > 1  # a Windows drive letter is not a scheme


def check_location(location: object) -> str:
    if not isinstance(location, str) or not location.strip():
        raise InvalidInputError("location must be a non-empty string")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in location):
        raise InvalidInputError("location must not contain control characters")
    return location


def file_uri_path(location: str) -> str | None:
    """The local path a ``file:`` URI names (``file:///abs``, ``file:/abs``,
    ``file://localhost/abs``, percent-decoded), or None for anything else.

    Local locations have one spelling: the plain absolute path.  Every root and every
    location given is brought to it, so what a client sends in any of those spellings
    is answered back as the same path, on every backend (docs/backends.md)."""
    if not location.startswith(("file:", "FILE:")) or not is_uri(location):
        return None
    parsed = urlparse(location)
    if parsed.netloc not in ("", "localhost"):
        raise InvalidInputError(f"location {location!r} names another host; a file: URI names this machine's files")
    return os.path.normpath(os.path.abspath(unquote(parsed.path or "/")))


def is_local(location: str) -> bool:
    """Whether a location is on this machine's disk (a path, or a ``file:`` URI)."""
    return not is_uri(location) or location.startswith("file:")


def normalize_root(root: str) -> str:
    """A root as given (URI, absolute or relative path) -> absolute form, no trailing '/'
    (a ``file:`` URI -> its path: :func:`file_uri_path`)."""
    root = check_location(root)
    local = file_uri_path(root)
    if local is not None:
        return local
    if is_uri(root):
        parsed = urlparse(root)
        if not parsed.netloc and parsed.path in ("", "/"):
            return f"{parsed.scheme}://"  # a bare scheme: the bucket comes from the names
        return root.rstrip("/")
    return os.path.abspath(os.path.expanduser(root))


def join(root: str, *parts: str) -> str:
    if is_uri(root):
        if root.endswith("://"):
            return root + posixpath.join(*parts) if parts else root
        return posixpath.join(root.rstrip("/"), *parts)
    return os.path.join(root, *parts)


def resolve(root: str, location: str) -> str:
    """A location relative to ``root`` (or already absolute / a URI) -> absolute form."""
    location = check_location(location)
    local = file_uri_path(location)
    if local is not None:
        return local
    if is_uri(location):
        return location.rstrip("/")
    if os.path.isabs(location) and not is_uri(root):
        return os.path.normpath(location)
    return join(root, location).rstrip("/") if is_uri(root) else os.path.normpath(join(root, location))


def is_within(root: str, location: str) -> bool:
    root_n = root.rstrip("/") + "/"
    return (location.rstrip("/") + "/").startswith(root_n)


def parts(location: str) -> list[str]:
    """The path components of a location (a URI's bucket included)."""
    if is_uri(location):
        parsed = urlparse(location)
        path = parsed.netloc + "/" + parsed.path
    else:
        path = location.replace("\\", "/")
    return [p for p in path.split("/") if p]


def parents(location: str, stop: str | None = None, limit: int = 32) -> list[str]:
    """The parent directories of ``location``, nearest first, down to (not
    including) ``stop`` or, without it, to the top of the path; at most ``limit``."""
    out: list[str] = []
    current = location.rstrip("/")
    stop_n = stop.rstrip("/") if stop else None
    while len(out) < limit:
        if is_uri(current):
            parsed = urlparse(current)
            if not parsed.path.strip("/"):
                break  # a bucket is no table directory of its own
            parent = current.rsplit("/", 1)[0]
        else:
            parent = os.path.dirname(current)
            if parent == current:
                break
        if stop_n is not None and (parent == stop_n or not is_within(stop_n, parent)):
            break
        out.append(parent)
        current = parent
    return out


def _endpoint(opts: dict[str, str]) -> str | None:
    """The object-store endpoint among lower-cased storage options (None: the service's own)."""
    return opts.get("endpoint") or opts.get("aws_endpoint") or opts.get("endpoint_url")


def filesystem(location: str, storage_options: dict[str, str] | None):
    """(pyarrow filesystem, path) for a location, honouring S3 storage options."""
    import pyarrow.fs as pafs

    if not is_uri(location) or location.startswith("file://"):
        path = urlparse(location).path if location.startswith("file://") else location
        return pafs.LocalFileSystem(), os.path.abspath(path)
    parsed = urlparse(location)
    opts = {k.lower(): v for k, v in (storage_options or {}).items()}
    if parsed.scheme in ("s3", "s3a"):
        endpoint = _endpoint(opts)
        kwargs = {}
        if endpoint:
            ep = urlparse(endpoint)
            kwargs["endpoint_override"] = ep.netloc or endpoint
            kwargs["scheme"] = ep.scheme or "https"
        for src, dst in (
            ("aws_access_key_id", "access_key"),
            ("access_key_id", "access_key"),
            ("aws_secret_access_key", "secret_key"),
            ("secret_access_key", "secret_key"),
            ("aws_session_token", "session_token"),
            ("session_token", "session_token"),
            ("aws_region", "region"),
            ("region", "region"),
        ):
            if opts.get(src):
                kwargs[dst] = opts[src]
        # the same bounds as Lance's object_store client, where the options set them
        if opts.get("connect_timeout"):
            kwargs["connect_timeout"] = _seconds(opts["connect_timeout"])
        if opts.get("timeout"):
            kwargs["request_timeout"] = _seconds(opts["timeout"])
        if opts.get("client_max_retries"):
            kwargs["retry_strategy"] = pafs.AwsStandardS3RetryStrategy(max_attempts=int(opts["client_max_retries"]) + 1)
        return pafs.S3FileSystem(**kwargs), parsed.netloc + parsed.path
    fs, path = pafs.FileSystem.from_uri(location)
    return fs, path


#: object_store's HTTP client options (obstore ``client_options``); every other storage
#: option is the store's own configuration (the names Lance's storage options use)
_CLIENT_OPTIONS = frozenset({
    "allow_http", "allow_invalid_certificates", "connect_timeout", "default_content_type", "http1_only",
    "http2_keep_alive_interval", "http2_keep_alive_timeout", "http2_keep_alive_while_idle", "http2_only",
    "pool_idle_timeout", "pool_max_idle_per_host", "proxy_url", "proxy_ca_certificate", "proxy_excludes",
    "root_certificate", "randomize_addresses", "read_timeout", "timeout", "user_agent",
})


def _object_store(location: str, storage_options: dict[str, str] | None):
    """(obstore store at the location's bucket, key) -- the same object_store Lance writes with."""
    from obstore.exceptions import UnknownConfigurationKeyError
    from obstore.store import from_url

    parsed = urlparse(location)
    opts = {k.lower(): v for k, v in (storage_options or {}).items()}
    client = {k: v for k, v in opts.items() if k in _CLIENT_OPTIONS}
    config = {k: v for k, v in opts.items() if k not in _CLIENT_OPTIONS}
    while True:  # Lance's storage options may carry keys of its own: the store names the ones it refuses
        try:
            store = from_url(f"{parsed.scheme}://{parsed.netloc}", config=config, client_options=client)
            return store, parsed.path.lstrip("/")
        except UnknownConfigurationKeyError as e:
            key = re.search(r"key: '([^']+)'", str(e))
            if not key or key.group(1) not in config:
                raise
            del config[key.group(1)]


def put_if_absent(location: str, data: bytes, storage_options: dict[str, str] | None = None) -> bool:
    """Create the file ``location`` holding ``data`` only if nothing is there (one atomic
    step, as Lance commits a version: a hard link on local disk, a conditional PUT
    (``If-None-Match: *``) on object storage); False when something already was."""
    if not is_uri(location) or location.startswith("file://"):
        path = urlparse(location).path if location.startswith("file://") else location
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}-{os.urandom(4).hex()}.tmp"
        with open(tmp, "wb") as out:
            out.write(data)
        try:
            os.link(tmp, path)
            return True
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)
    import obstore
    from obstore.exceptions import AlreadyExistsError, PreconditionError

    store, key = _object_store(location, storage_options)
    try:
        obstore.put(store, key, data, mode="create")
        return True
    except (AlreadyExistsError, PreconditionError):
        return False


#: (scheme, bucket, endpoint) -> why writes are refused there (None: conditional PUTs hold),
#: probed once per process (:func:`conditional_put_refusal`)
_CONDITIONAL_PUT: dict[tuple, str | None] = {}


def conditional_put_refusal(root: str, storage_options: dict[str, str] | None = None) -> str | None:
    """Why writes under ``root`` must be refused, or None where its store decides a
    conditional PUT (``If-None-Match: *``) atomically, as every commit here needs
    (Lance's own, the manifest's, a version's publication): without it two racing
    commits of one version both succeed and one is silently lost.

    Asked of the store itself, once per bucket and process: a probe object under
    ``<root>/_lance_ns/`` is created, created again (which must be refused) and
    removed.  Local disk always holds (a hard link).  A store that refuses the probe
    altogether (read-only credentials, say) cannot tell; it is not refused for that."""
    if not is_uri(root) or file_uri_path(root) is not None:
        return None
    parsed = urlparse(root)
    key = (parsed.scheme, parsed.netloc, _endpoint({k.lower(): v for k, v in (storage_options or {}).items()}))
    if key not in _CONDITIONAL_PUT:
        probe = join(root, "_lance_ns", f"conditional-put-probe-{os.urandom(6).hex()}")
        try:
            first, second = put_if_absent(probe, b"1", storage_options), put_if_absent(probe, b"2", storage_options)
        except Exception as e:  # noqa: BLE001 - no answer is no evidence against the store
            log.info("could not probe conditional PUTs under %s: %s", root, e)
            _CONDITIONAL_PUT[key] = None  # remembered too: a read-only client is not probed at every connect
            return None
        finally:
            try:
                delete_location(probe, storage_options)
            except Exception:  # noqa: BLE001 - a probe object left is only a few bytes
                pass
        _CONDITIONAL_PUT[key] = None if first and not second else (
            f"the object store at {parsed.scheme}://{parsed.netloc} ignores conditional PUTs (a second "
            "If-None-Match: * PUT of one key succeeded), so two racing commits would both be acknowledged "
            "and one silently lost; writes are refused (reads work)")
        if _CONDITIONAL_PUT[key]:
            log.error("%s", _CONDITIONAL_PUT[key])
    return _CONDITIONAL_PUT[key]


def _seconds(text: str) -> float:
    """object_store's durations ("30s", "500ms", "2m", or plain seconds) in seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", str(text))
    if not match:
        raise InvalidInputError(f"{text!r} is not a duration such as '30s' or '500ms'")
    return float(match.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[match.group(2)]


def remove_data_files(location: str, storage_options: dict[str, str] | None, fragments) -> None:
    """Delete the data files a losing writer wrote (unique names: never the winner's)."""
    for fragment in fragments:
        for f in fragment.files:
            try:
                delete_location(join(location, "data", f.path), storage_options)
            except Exception:  # noqa: BLE001 - an orphan file is harmless; the answer matters
                pass


def delete_location(location: str, storage_options: dict[str, str] | None = None) -> None:
    """Remove a table directory and everything under it (missing is fine)."""
    import pyarrow.fs as pafs

    fs, path = filesystem(location, storage_options)
    try:
        info = fs.get_file_info(path)
    except OSError:
        if not is_uri(location):
            raise
        # Some object stores refuse HEAD on a prefix (SeaweedFS table buckets
        # answer AccessDenied) but allow listing and deleting its objects.
        for item in fs.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True)):
            if item.type == pafs.FileType.File:
                with contextlib.suppress(FileNotFoundError):  # deleted by a concurrent delete
                    fs.delete_file(item.path)
        return
    if info.type == pafs.FileType.NotFound:
        return
    if info.type != pafs.FileType.Directory:
        with contextlib.suppress(FileNotFoundError):  # deleted by a concurrent delete
            fs.delete_file(path)
        return
    for attempt in range(_LATE_WRITER_RETRIES + 1):
        try:
            # a concurrent delete of the same directory (a racing drop) removes files under us
            with contextlib.suppress(FileNotFoundError):
                fs.delete_dir(path)
            return
        except OSError as e:
            # A writer still landing files (a CreateTable that lost the first commit, a
            # late writer of the dropped table) fills a directory between its listing
            # and its removal: on local disk that is ENOTEMPTY.  Its writes end soon.
            if not _NOT_EMPTY.search(str(e)) or attempt == _LATE_WRITER_RETRIES:
                raise
            time.sleep(0.02 * (attempt + 1))


#: how often a directory a late writer keeps filling is removed again (see delete_location)
_LATE_WRITER_RETRIES = 8
_NOT_EMPTY = re.compile(r"directory not empty|errno 39|ENOTEMPTY", re.IGNORECASE)


#: left in a dropped table's directory so that no later table of the same name reuses it
DROPPED_MARKER = ".lance-dropped"
#: the table property recording whether lance-ns owns a table's data (a drop deletes only
#: owned data): see lance_ns.catalog.entry, where the rules on it live
OWNED_KEY = "lance_ns.owned"


def mark_dropped(location: str, storage_options: dict[str, str] | None = None) -> None:
    """DropTable's first step, before the catalog entry goes: mark the directory
    taken for good.  A writer of the dropped table still running could otherwise
    land its files in a new table declared at the same default location; with
    the marker a new table gets a fresh location (CatalogNamespace.declare_table)."""
    try:
        fs, path = filesystem(location, storage_options)
        if not is_uri(location):  # object stores need no directory (an S3 one is an extra object)
            fs.create_dir(path, recursive=True)
        with fs.open_output_stream(f"{path.rstrip('/')}/{DROPPED_MARKER}") as out:
            out.write(b"dropped")
    except Exception as e:  # noqa: BLE001 - some object stores refuse a dropped table's path altogether
        if is_unreachable(e):  # but one that cannot be reached: the drop must not go on without it
            raise unreachable_error(e, location) from e


def delete_dropped(location: str, storage_options: dict[str, str] | None = None) -> None:
    """DropTable's last step: everything under ``location`` except the marker."""
    import pyarrow.fs as pafs

    fs, path = filesystem(location, storage_options)
    try:
        children = fs.get_file_info(pafs.FileSelector(path, recursive=False, allow_not_found=True))
    except OSError:
        delete_location(location, storage_options)
        return
    for child in children:
        name = child.path.rstrip("/").rsplit("/", 1)[-1]
        if name != DROPPED_MARKER:
            delete_location(join(location, name), storage_options)


def holds_files(location: str, storage_options: dict[str, str] | None = None) -> bool:
    """Whether anything exists under ``location`` (a listing failure counts as no)."""
    import pyarrow.fs as pafs

    try:
        fs, path = filesystem(location, storage_options)
        return bool(fs.get_file_info(pafs.FileSelector(path, recursive=False, allow_not_found=True)))
    except (OSError, ValueError):
        return False


def fresh_variant(location: str, tag: str | None = None) -> str:
    """``.../name.lance`` -> ``.../name-<random>.lance``: a sibling location no one uses
    (``tag``, eight hex digits, in place of the random ones: the same sibling every time)."""
    import secrets

    tag = tag or secrets.token_hex(4)
    stem, dot, suffix = location.rstrip("/").rpartition(".")
    if not dot or "/" in suffix:
        return f"{location.rstrip('/')}-{tag}"
    return f"{stem}-{tag}.{suffix}"


def unused_location(location: str, storage_options: dict[str, str] | None = None) -> str:
    """``location``, or a :func:`fresh_variant` of it when it still holds files (a dropped
    or deregistered table's, a killed writer's orphans): where a new table's data may go."""
    return fresh_variant(location) if holds_files(location, storage_options) else location


_FRESH_TAG = re.compile(r"-[0-9a-f]{8}")


def is_fresh_variant(location: str, of: str) -> bool:
    """Whether ``location`` is a :func:`fresh_variant` of ``of``."""
    location, of = location.rstrip("/"), of.rstrip("/")
    stem, dot, suffix = of.rpartition(".")
    if not dot or "/" in suffix:
        stem, suffix = of, ""
    else:
        suffix = "." + suffix
    if not (location.startswith(stem) and location.endswith(suffix)):
        return False
    return bool(_FRESH_TAG.fullmatch(location[len(stem): len(location) - len(suffix)]))


def has_versions(location: str, storage_options: dict[str, str] | None = None) -> bool:
    """Whether ``location`` holds a committed Lance version (a file in ``_versions/``)."""
    import pyarrow.fs as pafs

    fs, path = filesystem(join(location, "_versions"), storage_options)
    try:
        infos = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
    except (FileNotFoundError, NotADirectoryError):
        return False
    return any(i.type == pafs.FileType.File for i in infos)


def lance_version(location: str, storage_options: dict[str, str] | None = None) -> int | None:
    """The latest version of the Lance table at ``location``, or None if there is none
    (or it cannot be read)."""
    try:
        ds = open_lance(location, storage_options)
    except (ValueError, OSError):
        return None
    return None if ds is None else ds.version


def open_lance(location: str, storage_options: dict[str, str] | None = None):
    """The Lance dataset at ``location`` at its latest version, or None if there is none;
    any other failure (access refused, storage unreachable) is raised."""
    import lance

    try:
        return lance.dataset(location, storage_options=storage_options or None)
    except Exception as e:  # lance has no dedicated not-found type
        text = str(e).lower()
        if isinstance(e, FileNotFoundError) or "not found" in text or "does not exist" in text:
            return None
        raise
