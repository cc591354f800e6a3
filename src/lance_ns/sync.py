"""Sync: mirror a namespace tree of one backend into another.

Both sides are just namespaces, so any pair works (a ``dir`` into Glue, a Hive
Metastore into Unity, one REST server into another).  A run plans first and writes
nothing while the plan holds a refusal: an id deeper than the destination holds, a
location it would refuse, a destination table that names other data (unless
``on_conflict`` says to skip or replace it).  The destination answers those
questions itself (``namespace_refusal``, ``table_refusal``: the rules its own
operations apply); a destination that cannot tell before it tries (a remote server)
answers when the write is made, and the run reports it with its code.

Two modes:

* ``register`` (the default) shares the data: the destination's entries point at the
  source's locations and are recorded as registered, so dropping one there never
  deletes the data (ownership stays with the source).
* ``copy`` copies each table's files into the location the destination would choose
  for it (:mod:`lance_ns.dataset_copy`: the latest version, or with ``versions="all"``
  every version and tag, so time travel works there), checks every copied version's
  row count and schema, and only then registers it, recorded as the destination's own
  (dropping it there deletes the copy, never the source).

Each write is one atomic operation of the destination (CreateNamespace, RegisterTable,
DeclareTable), so a run killed at any point and started again plans only what is left:
no duplicate, no half-registered table, no table copied twice (an interrupted copy is
found at its location and finished).  A second run plans nothing and writes nothing.
"""

from __future__ import annotations

import concurrent.futures
import fnmatch
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from lance_namespace import (
    CreateNamespaceRequest,
    DeclareTableRequest,
    DeregisterTableRequest,
    DescribeNamespaceRequest,
    DescribeTableRequest,
    RegisterTableRequest,
)

from . import dataset_copy, storage, walk
from .base import placement_answer
from .catalog.entry import MANAGED_KEY, TABLE_TYPE_KEY
from .errors import (
    InvalidInputError,
    LanceNamespaceError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    code_of,
    error_from_code,
)
from .identifiers import to_string

MODES = ("register", "copy")
VERSIONS = dataset_copy.VERSIONS
ON_CONFLICT = ("skip", "fail", "replace")
#: tables whose plan steps are read at once
PLAN_THREADS = 8

#: the properties a backend keeps for itself, never carried to the destination, where they
#: would claim ownership of the source's data or a version history it does not hold: the
#: catalog's table kind, managed versioning, and every ``lance_ns.`` record (owner, versions,
#: the directory's history id)
_OWN_PROPERTIES = frozenset({TABLE_TYPE_KEY, MANAGED_KEY})
_OWN_PREFIX = "lance_ns."


#: namespace properties that place a namespace's storage (Hive's database and catalog
#: locations, Iceberg's ``location``): the destination places its own
_PLACEMENT_PROPERTIES = frozenset({"location", "database.location-uri", "catalog.location-uri"})


def _carried(properties: dict[str, str] | None, drop: frozenset[str] = _OWN_PROPERTIES) -> dict[str, str]:
    return {k: v for k, v in (properties or {}).items() if k not in drop and not k.startswith(_OWN_PREFIX)}


@dataclass
class Step:
    """One write of the plan, or one thing the plan leaves as it is (``action`` skip).

    ``location`` is where the destination's entry will point: the source's location
    (register), or the copy's (copy; ``copy`` then says what is copied)."""

    kind: str  # "namespace" | "table"
    action: str  # "create" | "register" | "declare" | "copy" | "replace" | "skip"
    source: list[str]
    target: list[str]
    location: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    reason: str = ""
    copy: dataset_copy.TableCopy | None = field(default=None, repr=False)

    @property
    def writes(self) -> bool:
        return self.action != "skip"

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "copy"}
        if self.copy is not None:
            out["copy"] = {"source": self.copy.source, "versions": self.copy.versions,
                           "files": len(self.copy.all_files), "bytes": self.copy.size}
        return out


@dataclass
class Refusal:
    """Why the plan cannot be applied: nothing is written while there is one."""

    source: list[str]
    target: list[str]
    code: int
    reason: str


@dataclass
class Plan:
    steps: list[Step] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)

    @property
    def writes(self) -> list[Step]:
        return [s for s in self.steps if s.writes]

    def to_dict(self) -> dict[str, Any]:
        return {"steps": [s.to_dict() for s in self.steps], "refusals": [asdict(r) for r in self.refusals]}


@dataclass
class Report:
    """What a run did: each step done, skipped (with why) or failed (with its code)."""

    plan: Plan
    done: list[Step] = field(default_factory=list)
    failed: list[tuple[Step, int, str]] = field(default_factory=list)

    @property
    def skipped(self) -> list[Step]:
        return [s for s in self.plan.steps if not s.writes]

    def to_dict(self) -> dict[str, Any]:
        return {
            "done": [s.to_dict() for s in self.done],
            "skipped": [s.to_dict() for s in self.skipped],
            "failed": [{**s.to_dict(), "code": code, "error": message} for s, code, message in self.failed],
            "refusals": [asdict(r) for r in self.plan.refusals],
        }


def sync(src, dst, src_id: Sequence[str] = (), dst_id: Sequence[str] = (), *, mode: str = "register",
         versions: str = "latest", on_conflict: str = "fail", include: Sequence[str] = (),
         exclude: Sequence[str] = (), dry_run: bool = False, advance: Callable[[], None] = lambda: None) -> Report:
    """Mirror ``src``'s tree below ``src_id`` into ``dst`` below ``dst_id``.

    Raises the first refusal's error (13 for what does not fit, 5 for a conflict under
    ``on_conflict="fail"``, 0 for what the destination cannot do) before anything is
    written; otherwise applies the plan (not with ``dry_run``) and reports each step.
    """
    found = plan(src, dst, src_id, dst_id, mode=mode, versions=versions, on_conflict=on_conflict,
                 include=include, exclude=exclude)
    if found.refusals:
        raise refusal_error(found)
    if dry_run:
        return Report(found)
    return apply(found, src, dst, advance)


def refusal_error(found: Plan) -> LanceNamespaceError:
    """The error a refused plan answers: its first refusal's code, all of them counted."""
    first, others = found.refusals[0], found.refusals[1:]
    more = f" (and {len(others)} more: {', '.join(to_string(r.target) for r in others)})" if others else ""
    return error_from_code(first.code, f"sync refused, nothing written: {first.reason}{more}")


@dataclass
class _Options:
    mode: str
    versions: str
    on_conflict: str


def plan(src, dst, src_id: Sequence[str] = (), dst_id: Sequence[str] = (), *, mode: str = "register",
         versions: str = "latest", on_conflict: str = "fail", include: Sequence[str] = (),
         exclude: Sequence[str] = ()) -> Plan:
    """What :func:`sync` would write, read from both sides; writes nothing."""
    if mode not in MODES:
        raise InvalidInputError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if versions not in VERSIONS:
        raise InvalidInputError(f"versions must be one of {', '.join(VERSIONS)}, got {versions!r}")
    if on_conflict not in ON_CONFLICT:
        raise InvalidInputError(f"on_conflict must be one of {', '.join(ON_CONFLICT)}, got {on_conflict!r}")
    options = _Options(mode, versions, on_conflict)
    src_id, dst_id = list(src_id), list(dst_id)
    _refuse_overlap(src, dst, src_id, dst_id)
    if src_id:
        src.describe_namespace(DescribeNamespaceRequest(id=src_id))  # 1 when it is missing
    tree = walk.tree(src, src_id)

    def wanted(parts: list[str]) -> bool:
        name = to_string(parts)
        return (not include or any(fnmatch.fnmatchcase(name, g) for g in include)) and not any(
            fnmatch.fnmatchcase(name, g) for g in exclude)

    def target(parts: list[str]) -> list[str]:
        return dst_id + parts[len(src_id):]

    tables = [t for t in tree.tables if wanted(t)]
    # a namespace goes along when it is wanted itself or holds a wanted table
    needed = {tuple(t[:i]) for t in tables for i in range(len(src_id) + 1, len(t))}
    namespaces = sorted((n for n in tree.namespaces if wanted(n) or tuple(n) in needed), key=len)
    out = Plan()

    def add(step: Step | None, refusal: Refusal | None) -> None:
        if refusal is not None:
            out.refusals.append(refusal)
        elif step is not None:
            out.steps.append(step)

    for i in range(1, len(dst_id) + 1):  # the destination's own path down to dst_id
        add(*_namespace_step(dst, dst_id[:i], dst_id[:i], {}))
    for parts in namespaces:
        props = _carried(src.describe_namespace(DescribeNamespaceRequest(id=parts)).properties, _PLACEMENT_PROPERTIES)
        add(*_namespace_step(dst, parts, target(parts), props))
    # each table's step reads both sides and no other step: read at once (a remote catalog's
    # round trips overlap; the steps keep the source's order)
    with concurrent.futures.ThreadPoolExecutor(PLAN_THREADS, thread_name_prefix="sync-plan") as pool:
        for step in pool.map(lambda parts: _table_step(src, dst, parts, target(parts), options), tables):
            add(*step)
    return out


def apply(found: Plan, src, dst, advance: Callable[[], None] = lambda: None) -> Report:
    """Run the plan's writes in order; a failed step is reported and the rest go on,
    except below a namespace that could not be made."""
    report, broken = Report(found), []
    for step in found.steps:
        if not step.writes:
            advance()
            continue
        if any(step.target[: len(b)] == b for b in broken):
            report.failed.append((step, 1, f"its namespace {to_string(step.target[:-1])!r} could not be made"))
            advance()
            continue
        try:
            _write(src, dst, step)
            report.done.append(step)
        except Exception as e:  # noqa: BLE001 - every failure is reported with its code; the run goes on
            if storage.is_unreachable(e):
                e = storage.unreachable_error(e)
            report.failed.append((step, code_of(e), str(e)))
            if step.kind == "namespace":
                broken.append(step.target)
        advance()
    return report


# -- the plan's parts -------------------------------------------------------------------


def _namespace_step(dst, source: list[str], target: list[str], props: dict[str, str]):
    try:
        held = dst.describe_namespace(DescribeNamespaceRequest(id=target)).properties or {}
    except NamespaceNotFoundError:
        refusal = placement_answer(dst, "namespace_refusal", target, True)
        if refusal is not None:
            return None, Refusal(source, target, code_of(refusal), str(refusal))
        return Step("namespace", "create", source, target, properties=dict(props)), None
    differ = sorted(k for k, v in props.items() if held.get(k) != v)
    reason = f"exists; its properties {differ} differ and are kept" if differ else "exists"
    return Step("namespace", "skip", source, target, properties=dict(props), reason=reason), None


def _table_step(src, dst, source: list[str], target: list[str], options: _Options):
    desc = src.describe_table(DescribeTableRequest(id=source, check_declared=True, vend_credentials=False))
    props = _carried(desc.properties)
    if not desc.location:
        return None, Refusal(source, target, 13, f"table {to_string(source)!r} has no location")
    copying = options.mode == "copy" and not desc.is_only_declared
    try:
        held = dst.describe_table(DescribeTableRequest(id=target, check_declared=True, vend_credentials=False))
    except (TableNotFoundError, NamespaceNotFoundError):
        held = None
    if copying:
        return _copy_step(src, dst, source, target, props, held, options)
    # register mode, and a declared table in either mode: the source's location (copy mode:
    # the destination's own, so the data it will get is its own)
    location = None if options.mode == "copy" else desc.location
    action = "declare" if desc.is_only_declared else "register"
    if held is None:
        refusal = placement_answer(dst, "table_refusal", target, location)
        if refusal is not None:
            return None, Refusal(source, target, code_of(refusal), f"table {to_string(source)!r}: {refusal}")
        return Step("table", action, source, target, location, props), None
    if (held.is_only_declared and desc.is_only_declared) if location is None else _same_location(held.location, location):
        return Step("table", "skip", source, target, held.location, props, reason="in sync"), None
    return _conflict(Step("table", action, source, target, location, props), held.location, options)


def _copy_step(src, dst, source, target, props, held, options: _Options):
    import lance

    theirs = lance.dataset(namespace_client=src, table_id=source)
    files = dataset_copy.plan_copy(theirs, options.versions)
    step = Step("table", "copy", source, target, None, props, reason=files.describe(), copy=files)
    if held is not None and _copied_in_sync(dst, target, theirs):
        step.action, step.location, step.reason = "skip", held.location, "in sync"
        return step, None
    location, why = _copy_location(dst, target, files)
    if location is None:
        return None, Refusal(source, target, *why)
    refusal = placement_answer(dst, "table_refusal", target, location)
    if refusal is not None:
        return None, Refusal(source, target, code_of(refusal), f"table {to_string(source)!r}: {refusal}")
    step.location = location
    return (step, None) if held is None else _conflict(step, held.location, options)


def _copy_location(dst, target: list[str], files: dataset_copy.TableCopy) -> tuple[str | None, tuple[int, str]]:
    """Where a copy goes: the place the destination draws for it from the source and the
    target (the same on every run, so an interrupted copy is found and finished), or a sibling
    named after the source where other data lies there; (None, (code, why)) where none can be."""
    location = placement_answer(dst, "table_location_for", target, f"{files.source}\n{to_string(target)}")
    if location is None:
        return None, (0, "copy mode needs a destination that says where it places a table before the table "
                         "exists (a lance-ns backend; a REST server's client cannot): sync on the server's own "
                         "configuration")
    storage_options = _storage_options(dst, target)
    if dataset_copy.foreign_files(files, location, storage_options):  # someone else's data: beside it
        location = dataset_copy.sibling_for(location, files.source)
        if dataset_copy.foreign_files(files, location, storage_options):
            return None, (5, f"table {to_string(target)!r}: {location!r} holds other data")
    return location, (0, "")


def _conflict(step: Step, held_at: str | None, options: _Options):
    clash = f"table {to_string(step.target)!r} exists at {held_at!r}"
    if options.mode == "register" and step.location:
        clash += f", not at {step.location!r}"
    if options.on_conflict == "fail":
        return None, Refusal(step.source, step.target, 5, clash + " (on_conflict=fail)")
    if options.on_conflict == "skip":
        step.action, step.reason = "skip", clash
        return step, None
    step.action, step.reason = "replace", clash
    return step, None


def _copied_in_sync(dst, target: list[str], theirs) -> bool:
    """Whether the destination's table holds the source's version, rows and schema."""
    import lance

    try:
        ours = lance.dataset(namespace_client=dst, table_id=target)
    except Exception:  # noqa: BLE001 - a declared table, or one whose data cannot be read: not in sync
        return False
    return ours.version == theirs.version and ours.schema == theirs.schema and ours.count_rows() == theirs.count_rows()


def _storage_options(ns, table_id: list[str]) -> dict[str, str]:
    return placement_answer(ns, "storage_options_for", table_id) or {}


def _refuse_overlap(src, dst, src_id: list[str], dst_id: list[str]) -> None:
    """One catalog on both sides: the trees must not overlap (it would register each
    table a second time inside itself)."""
    if not (src is dst or _namespace_id(src) == _namespace_id(dst) is not None):
        return
    shorter = min(len(src_id), len(dst_id))
    if src_id[:shorter] == dst_id[:shorter]:
        raise InvalidInputError(
            f"the source {to_string(src_id) or '(root)'!r} and the destination {to_string(dst_id) or '(root)'!r} "
            "are one tree of one catalog (one equals or contains the other): nothing written")


def _namespace_id(ns) -> str | None:
    try:
        return ns.namespace_id() or None
    except Exception:  # noqa: BLE001 - a namespace that does not say who it is
        return None


def _same_location(a: str | None, b: str | None) -> bool:
    """Whether two locations are one, in storage's one spelling of a location."""
    return bool(a and b) and storage.normalize_root(a) == storage.normalize_root(b)


# -- the writes -------------------------------------------------------------------------


def _write(src, dst, step: Step) -> None:
    if step.kind == "namespace":
        dst.create_namespace(CreateNamespaceRequest(id=step.target, mode="ExistOk", properties=step.properties or None))
        return
    if step.action == "declare":
        try:
            dst.declare_table(DeclareTableRequest(id=step.target, location=step.location,
                                                  properties=step.properties or None, vend_credentials=False))
        except TableAlreadyExistsError:
            _require_same(dst, step)
        return
    properties = step.properties
    if step.copy is not None:
        _copy_table(src, dst, step)
        # the copy is the destination's own: dropping it there deletes it (and only it)
        properties = {**properties, storage.OWNED_KEY: "true"}
    if step.action == "replace":
        dst.deregister_table(DeregisterTableRequest(id=step.target))  # never drops: the data is someone's
    try:
        dst.register_table(RegisterTableRequest(id=step.target, location=step.location, properties=properties or None))
    except TableAlreadyExistsError:
        _require_same(dst, step)  # a run killed after this write, resumed: already done


def _copy_table(src, dst, step: Step) -> None:
    """The data of a copy step at its location, each copied version checked, before any entry."""
    import lance

    theirs = lance.dataset(namespace_client=src, table_id=step.source, version=step.copy.versions[-1])
    source_options = {**_storage_options(src, step.source), **(theirs.initial_storage_options or {})}
    target_options = _storage_options(dst, step.target)
    dataset_copy.copy(step.copy, step.location, source_options, target_options)
    dataset_copy.verify(theirs, step.copy, step.location, target_options)


def _require_same(dst, step: Step) -> None:
    held = dst.describe_table(DescribeTableRequest(id=step.target, check_declared=True, vend_credentials=False))
    if step.location is not None and not _same_location(held.location, step.location):
        raise TableAlreadyExistsError(f"table {to_string(step.target)!r} was made at {held.location!r} meanwhile")
