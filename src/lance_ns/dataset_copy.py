"""A Lance table copied to another location, version history and all, by its files.

Lance itself says which files each version references (``LanceDataset.tracked_files``:
data, deletion, index and transaction files, and the manifest).  A copy writes every
file but the manifests first, then the manifests in version order, each in one step
(a temporary file renamed on local disk; one PUT on object storage), then the tags.
So a reader of the copy sees, at every moment, no table or a complete prefix of the
copied history, and a copy interrupted and started again copies only what is not
there yet (a file of the same path and size is the same file: Lance never rewrites
one, and names data files by random ids).

The copy is byte for byte, so version numbers, tags and time travel are the
source's.  ``versions="latest"`` copies the one version asked for (its older versions
are absent at the destination, as after ``cleanup_old_versions``).  Branches and
files of other base paths (a shallow clone's) are not copied.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import os
from dataclasses import dataclass, field
from typing import Callable

from . import storage
from .errors import InternalError, UnsupportedOperationError

VERSIONS = ("latest", "all")

#: what Lance keeps beside the versions that a copy must not carry: a hint naming the
#: latest version (a reader lists the manifests without it), written when the copy is done
_LATEST_HINT = "_versions/latest_version_hint.json"
_TAGS = "_refs/tags/"
#: the suffix of a file being written (renamed when whole): what an interrupted copy leaves
_PARTIAL = ".partial"


@dataclass
class TableCopy:
    """The files of the chosen versions of the table at ``source`` (paths relative to it)."""

    source: str
    versions: list[int]
    files: dict[str, int] = field(default_factory=dict)  # path -> size: everything but manifests and tags
    manifests: list[tuple[int, str, int]] = field(default_factory=list)  # (version, path, size), in order
    tags: dict[str, int] = field(default_factory=dict)  # path -> size

    @property
    def size(self) -> int:
        return sum(self.files.values()) + sum(s for _, _, s in self.manifests) + sum(self.tags.values())

    @property
    def all_files(self) -> dict[str, int]:
        return {**self.files, **{p: s for _, p, s in self.manifests}, **self.tags}

    def describe(self) -> str:
        first, last = self.versions[0], self.versions[-1]
        which = f"version {last}" if first == last else f"versions {first}-{last}"
        tags = f", {len(self.tags)} tag(s)" if self.tags else ""
        return f"{which}, {len(self.all_files)} files, {_size(self.size)}{tags}"


def plan_copy(dataset, versions: str = "latest") -> TableCopy:
    """What copying ``dataset`` (a ``LanceDataset`` at the version to copy up to) takes."""
    if versions not in VERSIONS:
        raise UnsupportedOperationError(f"versions must be one of {', '.join(VERSIONS)}, got {versions!r}")
    upto = dataset.version
    present = {row["path"]: row["size_bytes"] for row in dataset.all_files().read_all().to_pylist()}
    base = dataset.uri.rstrip("/")
    wanted = range(upto, upto + 1) if versions == "latest" else range(1, upto + 1)
    plan = TableCopy(source=base, versions=[])
    manifests: dict[int, str] = {}
    rows = dataset.tracked_files(min_version=upto if versions == "latest" else None).read_all().to_pylist()
    for row in rows:
        if row["version"] not in wanted:
            continue
        if storage.normalize_root(str(row["base_uri"])) != storage.normalize_root(base):
            raise UnsupportedOperationError(
                f"version {row['version']} of {base!r} references {row['path']!r} in another base "
                f"({row['base_uri']!r}, a shallow clone's): not copied")
        path = row["path"]
        if path not in present:
            raise InternalError(f"{base!r} version {row['version']} references {path!r}, which is missing")
        if row["type"] == "manifest":
            manifests[row["version"]] = path
        else:
            plan.files[path] = present[path]
    plan.versions = sorted(manifests)
    plan.manifests = [(v, manifests[v], present[manifests[v]]) for v in plan.versions]
    if versions == "all":
        plan.tags = {p: s for p, s in present.items() if p.startswith(_TAGS)}
    return plan


def foreign_files(plan: TableCopy, target: str, storage_options: dict[str, str] | None) -> list[str]:
    """Files at ``target`` that are not this copy's (another path, or the same path and
    another size): empty where the target is empty or holds an interrupted copy of it."""
    held = _listing(target, storage_options)
    want = plan.all_files
    return sorted(p for p, size in held.items()
                  if p != _LATEST_HINT and not p.endswith(_PARTIAL) and want.get(p) != size)


def copy(plan: TableCopy, target: str, source_options: dict[str, str] | None,
         target_options: dict[str, str] | None, threads: int = 8) -> int:
    """Copy what ``plan`` names that ``target`` lacks; the bytes written."""
    src_fs, src_root = storage.filesystem(plan.source, source_options)
    dst_fs, dst_root = storage.filesystem(target, target_options)
    held = _listing(target, target_options)
    for leftover in [p for p in held if p.endswith(_PARTIAL)]:  # an interrupted copy's
        dst_fs.delete_file(f"{dst_root.rstrip('/')}/{leftover}")
    todo = lambda files: [p for p, size in files if held.get(p) != size]  # noqa: E731
    copy_one = _copier(src_fs, src_root, dst_fs, dst_root, local=storage.is_local(target))
    written = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=threads) as pool:
        for n in pool.map(copy_one, todo(plan.files.items())):
            written += n
    for path in todo([(p, s) for _, p, s in plan.manifests]):  # in version order: each a complete version
        written += copy_one(path)
    for path in todo(plan.tags.items()):
        written += copy_one(path)
    return written


def verify(source_dataset, plan: TableCopy, target: str, target_options: dict[str, str] | None) -> None:
    """Each copied version reads back at ``target`` with the source's row count and schema
    (InternalError naming the first difference otherwise)."""
    import lance

    for version in plan.versions:
        ours = lance.dataset(target, version=version, storage_options=target_options or None)
        theirs = source_dataset.checkout_version(version)
        if ours.schema != theirs.schema:
            raise InternalError(f"the copy of {plan.source!r} at {target!r}: version {version}'s schema differs")
        if ours.count_rows() != theirs.count_rows():
            raise InternalError(f"the copy of {plan.source!r} at {target!r}: version {version} holds "
                                f"{ours.count_rows()} rows, the source {theirs.count_rows()}")


def sibling_for(location: str, source: str) -> str:
    """The sibling of ``location`` a copy of ``source`` goes to when ``location`` holds other
    data: named after the source, so a resumed copy finds it again."""
    return storage.fresh_variant(location, tag=hashlib.sha256(source.encode()).hexdigest()[:8])


# -- files --------------------------------------------------------------------------------


def _listing(location: str, storage_options: dict[str, str] | None) -> dict[str, int]:
    import pyarrow.fs as pafs

    fs, root = storage.filesystem(location, storage_options)
    try:
        infos = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    prefix = root.rstrip("/") + "/"
    return {i.path[len(prefix):]: i.size for i in infos if i.type == pafs.FileType.File and i.path.startswith(prefix)}


def _copier(src_fs, src_root: str, dst_fs, dst_root: str, local: bool) -> Callable[[str], int]:
    def copy_one(path: str) -> int:
        src, dst = f"{src_root.rstrip('/')}/{path}", f"{dst_root.rstrip('/')}/{path}"
        # written whole under another name, then renamed: a reader never opens half a file
        # (an object store's PUT is whole already)
        staged = f"{dst}.{os.getpid()}-{os.urandom(4).hex()}{_PARTIAL}" if local else dst
        if local:
            dst_fs.create_dir(os.path.dirname(dst), recursive=True)
        with src_fs.open_input_stream(src) as reader, dst_fs.open_output_stream(staged) as writer:
            n = 0
            while chunk := reader.read(8 << 20):
                writer.write(chunk)
                n += len(chunk)
        if local:
            dst_fs.move(staged, dst)
        return n

    return copy_one


def _size(n: float) -> str:
    unit = "B"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            break
        n /= 1024
    return f"{n:.0f} B" if unit == "B" else f"{n:.1f} {unit}"
