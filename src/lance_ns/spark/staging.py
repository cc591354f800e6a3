"""Staged CTAS and RTAS: ``lancens.spark.LanceCatalog`` is a StagingTableCatalog, so
``CREATE [OR REPLACE] TABLE ... AS SELECT``, ``REPLACE TABLE ... AS SELECT`` and
``df.writeTo(t).create()`` / ``.replace()`` / ``.createOrReplace()`` change nothing in the
namespace until their job has succeeded, and then change it in one step.

Spark stages the table (:func:`stage`), runs the write job on what it returns, and commits
(:func:`commit`) or aborts (:func:`abort`).  The job writes its fragments where the table's
data will be, records them (:mod:`.jobfiles`) and hands its commit over instead of making
it (option ``stage``, :class:`.datasource.StagedCommit`).  The commit then:

* creates: the fragments are at the location the namespace gives a new table before its
  entry exists (``table_location_for``; an unused sibling where that still holds files), which
  no entry names.  The commit makes version 1 there (only if no other writer made one) and
  registers the table (RegisterTable: owned by the namespace, so DROP TABLE deletes it,
  with the TBLPROPERTIES): the table appears with its rows in one step.  An
  implementation-managed table cannot be registered: it is declared at that location and
  its version 1 published through the namespace right after, so for that moment the
  namespace shows it declared, without rows (a driver killed then leaves it declared).
* replaces: the fragments are in the existing table's location, named by no version.  The
  commit is one Lance Overwrite of the table (through the namespace when it is
  implementation-managed) with the new schema and rows: readers see the old table until
  then, the new one after.  The table keeps its entry (location, owner, properties) and
  its history: VERSION AS OF still reaches the replaced rows.

A driver killed before the commit leaves the namespace as it was: no table, or the old one
unchanged.  What stays is the job's data files at a location no entry names, or in a table's
directory where no version names them: orphans nothing reads, listed in
``_lance_ns_spark/<job>/``.  A CTAS run again writes elsewhere: each stage draws its own
location where the namespace's layout draws one (dir), else a fresh sibling of the default
location once that holds files.

Not staged (the non-atomic path Spark takes for any other catalog: the table is created,
or dropped and created, before the job, and dropped again only if the job fails while its
driver lives): a create where the namespace cannot tell a new table's location or kind
before its entry exists (a REST server's client: the server decides at declaration), and a
replace whose TBLPROPERTIES the table does not already have (an entry's properties cannot
change in the one Lance commit).
"""

from __future__ import annotations

import enum
import json
import uuid
from dataclasses import asdict, dataclass

from .. import storage
from ..base import placement_answer
from .datasource import StagedCommit, commit_staged, undeclare
from .errors import error
from .jobfiles import JobFiles
from .resolve import TableRef, resolve


class Mode(enum.Enum):
    """Which of Spark's stage calls: stageCreate, stageReplace, stageCreateOrReplace."""

    CREATE = "create"
    REPLACE = "replace"
    CREATE_OR_REPLACE = "create_or_replace"


@dataclass(frozen=True)
class Stage:
    """A staged table, as the JVM keeps it between :func:`stage` and the commit or abort."""

    replaces: bool  # False: a staged create
    job: str  # the write job's id (its records and handed-over commit: JobFiles)
    table: list[str]
    location: str  # where the job writes its fragments
    storage_options: dict[str, str]
    properties: dict[str, str]  # the table's TBLPROPERTIES (a create's entry gets them)
    managed: bool = False  # a create of an implementation-managed table

    @classmethod
    def of(cls, fields: dict) -> Stage:
        return cls(**{**fields, "table": list(fields["table"])})

    def job_files(self) -> JobFiles:
        return JobFiles(self.location, self.storage_options, job_id=self.job)

    @property
    def entry_properties(self) -> dict[str, str]:
        """A created table's entry properties: its TBLPROPERTIES, and the namespace's ownership of
        the data (it chose the location: DROP TABLE deletes it), unless they say otherwise."""
        return {storage.OWNED_KEY: "true", **self.properties}


def stage(ns, table_id: list[str], properties: dict[str, str], mode: Mode, options: dict[str, str]) -> dict:
    """Spark's stage call on ``table_id`` (``options``: the source options that address
    it through the namespace): ``atomic`` with the write ``options`` of the job and the
    ``stage`` to commit or abort, or not ``atomic`` (the non-atomic path, where ``replaces``
    says whether the table must be dropped first).  Nothing is written."""
    from lance_namespace import DescribeTableRequest

    from ..errors import TableAlreadyExistsError, TableNotFoundError

    try:
        existing = ns.describe_table(DescribeTableRequest(id=table_id))
    except TableNotFoundError:
        if mode is Mode.REPLACE:
            raise
        return _stage_create(ns, table_id, properties)
    if mode is Mode.CREATE:
        raise TableAlreadyExistsError(f"table {table_id} already exists")
    if any((existing.properties or {}).get(k) != v for k, v in properties.items()):
        return {"atomic": False, "replaces": True}
    ref, _ = resolve(options)
    staged = Stage(replaces=True, job=uuid.uuid4().hex, table=table_id, location=ref.uri,
                   storage_options=ref.storage_options, properties=properties)
    return _staged(staged, {**options, "stage": staged.job, "tableProperties": json.dumps(properties)})


def _stage_create(ns, table_id: list[str], properties: dict[str, str]) -> dict:
    job = uuid.uuid4().hex
    # (a missing namespace is code 1 here, a level holding no tables 13, a kind the backend cannot hold 0)
    managed = placement_answer(ns, "managed_versioning_for", table_id, properties)
    location = placement_answer(ns, "table_location_for", table_id, job)
    if managed is None or location is None:
        return {"atomic": False, "replaces": False}
    storage_options = placement_answer(ns, "storage_options_for", table_id) or {}
    location = storage.unused_location(location, storage_options)
    staged = Stage(replaces=False, job=job, table=table_id, location=location, storage_options=storage_options,
                   properties=properties, managed=managed)
    options = {"path": location, **{f"storage.{k}": v for k, v in storage_options.items()},
               "stage": job, "tableProperties": json.dumps(properties)}
    return _staged(staged, options)


def _staged(staged: Stage, options: dict[str, str]) -> dict:
    return {"atomic": True, "options": options, "stage": asdict(staged)}


def commit(ns, staged: Stage, options: dict[str, str]) -> None:
    """commitStagedChanges: the job's handed-over commit made (see the module docstring)."""
    job = staged.job_files()
    text = job.staged()
    if text is None:
        raise error("InvalidTableStateError", f"the write job of table {staged.table} handed no commit over")
    handed = StagedCommit.from_json(text)
    if staged.replaces:
        _commit_replace(staged, handed, options)
    elif staged.managed:
        _commit_managed_create(ns, staged, handed, options)
    else:
        _commit_create(ns, staged, handed)
    job.finish()


def _commit_replace(staged: Stage, handed: StagedCommit, options: dict[str, str]) -> None:
    ref, _ = resolve(options)
    if not _same_location(ref.uri, staged.location):
        raise error("ConcurrentModificationError", f"table {staged.table} was dropped or replaced while the "
                                                   "statement ran (code 14): nothing was committed, run it again")
    commit_staged(ref, handed)


def _commit_create(ns, staged: Stage, handed: StagedCommit) -> None:
    """Version 1 at the unregistered location, then the entry: the one step readers see."""
    from lance_namespace import RegisterTableRequest

    from ..errors import LanceNamespaceError

    try:
        commit_staged(TableRef(uri=staged.location, storage_options=staged.storage_options), handed,
                      first_version=True)
    except Exception:
        if storage.lance_version(staged.location, staged.storage_options) is not None:
            # another CTAS of the name staged here and committed first: its table, not ours
            raise error("TableAlreadyExistsError", f"table {staged.table} was created while this one was written")
        raise
    try:
        ns.register_table(RegisterTableRequest(id=staged.table, location=staged.location,
                                               properties=staged.entry_properties))
    except LanceNamespaceError:
        if _holds(ns, staged):  # registered after all (the answer was lost on the way)
            return
        # our version 1 is at a location no entry names, which this job alone wrote to
        storage.delete_location(staged.location, staged.storage_options)
        raise


def _commit_managed_create(ns, staged: Stage, handed: StagedCommit, options: dict[str, str]) -> None:
    """Declared at the location, then version 1 published through the namespace."""
    from lance_namespace import DeclareTableRequest

    ns.declare_table(DeclareTableRequest(id=staged.table, location=staged.location,
                                         properties=staged.entry_properties))
    ref, _ = resolve(options)
    try:
        commit_staged(ref, handed, first_version=True)
    except Exception:
        undeclare(ref)  # (it deletes the location with the declaration: only this job wrote there)
        raise


def _holds(ns, staged: Stage) -> bool:
    """Whether the namespace has the staged table at the staged location."""
    from lance_namespace import DescribeTableRequest

    from ..errors import TableNotFoundError

    try:
        held = ns.describe_table(DescribeTableRequest(id=staged.table))
    except TableNotFoundError:
        return False
    return _same_location(held.location, staged.location)


def _same_location(a: str | None, b: str) -> bool:
    return bool(a) and storage.normalize_root(a) == storage.normalize_root(b)


def abort(staged: Stage) -> None:
    """abortStagedChanges: every file the job wrote deleted (its recorded files: those of
    tasks still running too, see :mod:`.jobfiles`); the namespace was never changed."""
    staged.job_files().abort([])
