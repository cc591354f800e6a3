"""Which data files a Spark write job created, so that a failed job leaves none.

Spark calls ``abort`` with the commit messages of the tasks that finished
before the job failed.  A task still writing at that moment is not among
them: it finishes later (its message is dropped) or is killed.  So every
task also records its files under ``<table>/_lance_ns_spark/<job>/`` as soon
as they are complete, and then looks for the job's ``ABORTED`` marker;
``abort`` writes the marker first and then deletes every recorded file.
Whichever comes second sees the other: abort finds the record, or the task
finds the marker and deletes its own files.

Left behind: the ``ABORTED`` marker of a failed job (a few bytes; a later
task of that job must still see it) and the partial file of a task killed in
the middle of writing one, which no record can name.

A staged job (a CTAS or RTAS of the catalog, :mod:`.staging`) commits nothing
itself: its driver hands the commit over as ``STAGED`` beside the records,
for the catalog's ``commitStagedChanges`` to take (:meth:`JobFiles.stage`,
:meth:`JobFiles.staged`); until then the records name its files, so an abort
still finds them.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from dataclasses import dataclass, field
from typing import Iterable

JOBS_DIR = "_lance_ns_spark"
ABORTED = "ABORTED"
STAGED = "STAGED"


@dataclass(frozen=True)
class JobFiles:
    uri: str  # the table's location
    storage_options: dict[str, str] = field(default_factory=dict)
    job_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def _dir(self) -> str:
        return f"{JOBS_DIR}/{self.job_id}"

    def _session(self):
        return open_session(self.uri, self.storage_options)

    def record(self, paths: list[str]) -> bool:
        """Record a task's finished data files (relative to ``data/``).

        False when the job was aborted meanwhile: the files are then deleted
        and the task must report none.
        """
        if not paths:
            return True
        session = self._session()
        record = f"{self._dir}/{uuid.uuid4().hex}.json"
        _upload(session, record, json.dumps(paths))
        if session.contains(f"{self._dir}/{ABORTED}"):
            delete_data_files(session, paths)
            _delete_quietly(session, record)
            return False
        return True

    def abort(self, paths: Iterable[str]) -> None:
        """Delete the files in ``paths`` and every file a task of this job recorded."""
        session = self._session()
        _upload(session, f"{self._dir}/{ABORTED}", "")
        records = self._records(session)
        found = set(paths)
        for record in records:
            found.update(json.loads(_download(session, record)))
        delete_data_files(session, sorted(found))
        for record in records:
            _delete_quietly(session, record)
        _delete_quietly(session, f"{self._dir}/{STAGED}")

    def finish(self) -> None:
        """Forget the records (and a staged job's handed-over commit) of a committed job."""
        session = self._session()
        for record in self._records(session):
            _delete_quietly(session, record)
        _delete_quietly(session, f"{self._dir}/{STAGED}")
        _remove_empty_local_dirs(self.uri, self._dir)

    def stage(self, commit: str) -> None:
        """Hand a staged job's commit (text) over to whoever commits it later."""
        _upload(self._session(), f"{self._dir}/{STAGED}", commit)

    def staged(self) -> str | None:
        """The commit a staged job handed over, or None if it handed none over."""
        session = self._session()
        if not session.contains(f"{self._dir}/{STAGED}"):
            return None
        return _download(session, f"{self._dir}/{STAGED}")

    def _records(self, session) -> list[str]:
        return [p for p in session.list(self._dir) if p.endswith(".json")]


def open_session(uri: str, storage_options: dict[str, str] | None):
    """A lance file session rooted at the table ``uri``."""
    from lance.file import LanceFileSession

    return LanceFileSession(uri, storage_options=storage_options or None)


def delete_data_files(session, paths: Iterable[str]) -> None:
    """Delete data files (paths relative to ``data/``), best effort per file."""
    delete_files(session, (f"data/{path}" for path in paths))


def delete_files(session, paths: Iterable[str]) -> None:
    """Delete files (paths relative to the table), best effort per file."""
    for path in paths:
        _delete_quietly(session, path)


def _upload(session, remote: str, text: str) -> None:
    fd, local = tempfile.mkstemp(prefix="lance-ns-job-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        session.upload_file(local, remote)
    finally:
        os.unlink(local)


def _download(session, remote: str) -> str:
    fd, local = tempfile.mkstemp(prefix="lance-ns-job-")
    os.close(fd)
    try:
        session.download_file(remote, local)
        with open(local) as f:
            return f.read()
    finally:
        os.unlink(local)


def _delete_quietly(session, path: str) -> None:
    try:
        session.delete_file(path)
    except OSError:  # already gone, or never written
        pass


def _remove_empty_local_dirs(uri: str, rel: str) -> None:
    # object stores have no directories; on local disk the emptied job
    # directory (and the jobs directory, once empty) would be litter
    if "://" in uri and not uri.startswith("file://"):
        return
    base = uri[len("file://") :] if uri.startswith("file://") else uri
    for path in (os.path.join(base, rel), os.path.join(base, JOBS_DIR)):
        try:
            os.rmdir(path)
        except OSError:
            return
