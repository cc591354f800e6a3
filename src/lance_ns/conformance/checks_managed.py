"""Conformance checks of table versions: implementation-managed tables
(``managed_versioning``), the version operations on storage-managed tables, and
BatchCommitTables with its four kinds of operation.

A table declared with ``managed_versioning=true`` has its version history held
by the namespace: pylance commits through CreateTableVersion and resolves
versions through ListTableVersions / DescribeTableVersion; a write made straight
to storage is not reflected.  The checks need the "managed" capability (a
backend class declaring ``supports_managed_versioning``); a backend declaring
it has none must refuse such a table with code 0 (tests/conformance/test_managed.py).

Staging manifests come from pylance itself: :class:`Stager` lets pylance
prepare a commit through the namespace and keeps the CreateTableVersion request
instead of sending it, so a check can send that request with every field.
"""

from __future__ import annotations

from typing import Any

from lance_namespace import LanceNamespace

from .model import NS, Call, Check, Fn

_TABLE = [NS, "managed"]
_NEEDS = frozenset({"managed", "data"})
#: rows each pylance write through the namespace adds
_BATCH = 2


class Stager(LanceNamespace):
    """A namespace client that lets pylance stage a commit without publishing it."""

    def __init__(self, inner: LanceNamespace):
        self.inner = inner
        self.staged: dict | None = None

    def namespace_id(self) -> str:
        return f"stager({self.inner.namespace_id()})"

    def describe_table(self, request):
        return self.inner.describe_table(request)

    def list_table_versions(self, request):
        return self.inner.list_table_versions(request)

    def describe_table_version(self, request):
        return self.inner.describe_table_version(request)

    def create_table_version(self, request):
        self.staged = dict(request)
        raise RuntimeError("staged, not published (conformance check)")


def _fn(fn) -> Fn:
    """A step running ``fn(run)``; an exception is the check's failure, not the run's."""

    def step(run) -> str | None:
        try:
            return fn(run)
        except Exception as e:  # noqa: BLE001 - reported as the check's problem
            return f"{getattr(fn, '__name__', 'step')}: {type(e).__name__}: {str(e)[:300]}"

    step.__name__ = getattr(fn, "__name__", "step")
    return Fn(step)


def _rows(n: int):
    import pyarrow as pa

    return pa.table({"id": list(range(n))})


def _pylance_append(run, table_id: list[str]):
    import lance

    return lance.write_dataset(_rows(_BATCH), namespace_client=run.target.client, table_id=table_id, mode="append")


def _appends(times: int):
    """pylance appends through the namespace; the namespace publishes each version."""

    def fn(run) -> str | None:
        table_id = run.expand(list(_TABLE))
        for _ in range(times):
            _pylance_append(run, table_id)
        run.vars["managed_rows"] = run.vars.get("managed_rows", 0) + times * _BATCH
        return None

    return _fn(fn)


def _stage(var: str):
    """Let pylance stage the next commit; its CreateTableVersion request -> ``vars[var]``."""

    def fn(run) -> str | None:
        import lance

        stager = Stager(run.target.client)
        try:
            lance.write_dataset(_rows(_BATCH), namespace_client=stager, table_id=run.expand(list(_TABLE)),
                                mode="append")
        except Exception:  # noqa: BLE001 - the stager refuses the commit on purpose
            pass
        if stager.staged is None:
            return "pylance staged no commit through the namespace"
        run.vars[var] = stager.staged
        for key in ("version", "manifest_path", "manifest_size", "e_tag", "naming_scheme"):
            run.vars[f"{var}_{key}"] = stager.staged.get(key)
        return None

    return _fn(fn)


def _bypass_write(run) -> str | None:
    """Append straight to storage, bypassing the namespace (as any Lance writer could)."""
    import lance

    described = run.call("DescribeTable", {"id": _TABLE})
    run.vars["managed_published"] = described.get("version")
    lance.write_dataset(_rows(5), described["location"], mode="append",
                        storage_options=described.get("storage_options") or None)
    return None


def _pylance_sees_published_rows(run) -> str | None:
    import lance

    ds = lance.dataset(namespace_client=run.target.client, table_id=run.expand(list(_TABLE)))
    want = run.vars.get("managed_rows")
    if ds.count_rows() != want:
        return f"pylance through the namespace reads {ds.count_rows()} rows, expected the {want} published"
    return None


def _append_after_bypass(run) -> str | None:
    """The namespace's chain goes on after a bypass write: pylance's next append through
    the namespace becomes the namespace's next version, with the namespace's rows and its
    own, never the bypass rows (and never pylance's "commit result unknown")."""
    table_id = run.expand(list(_TABLE))
    before = run.vars.get("managed_published")
    try:
        ds = _pylance_append(run, table_id)
    except Exception as e:  # noqa: BLE001 - the point of the check
        return f"the append after a bypass write failed: {type(e).__name__}: {str(e)[:200]}"
    run.vars["managed_rows"] += _BATCH
    if before is not None and ds.version != before + 1:
        return f"the append became version {ds.version}, expected the namespace's next one ({before + 1})"
    return _pylance_sees_published_rows(run)


def _stage_storage_commit(table: str, var: str):
    """A genuine staged commit of the storage-managed table ``table``: pylance appends
    straight to storage, and that version's manifest is moved out of its place to a
    staging name, so that CreateTableVersion is what puts it back."""

    def fn(run) -> str | None:
        import uuid

        import lance

        from ..storage import filesystem, join
        from ..datasets import manifest_name, object_store_path

        described = run.call("DescribeTable", {"id": [NS, table]})
        location, opts = described["location"], described.get("storage_options") or {}
        ds = lance.write_dataset(_rows(_BATCH), location, mode="append", storage_options=opts or None)
        final = join(location, "_versions", manifest_name(ds.version, "V2"))
        staged = f"{final}-{uuid.uuid4().hex}"
        fs, path = filesystem(final, opts)
        fs.move(path, filesystem(staged, opts)[1])
        for hint in ("latest_version_hint.json",):
            try:
                fs.delete_file(filesystem(join(location, "_versions", hint), opts)[1])
            except (FileNotFoundError, OSError):
                pass
        run.vars[f"{var}_version"] = ds.version
        run.vars[f"{var}_manifest_path"] = object_store_path(staged)
        return None

    return _fn(fn)


def _versions_absent(table: str, *versions: int):
    def fn(run) -> str | None:
        listed = run.call("ListTableVersions", {"id": [NS, table]})
        present = sorted(v.get("version") for v in listed.get("versions") or [])
        there = [v for v in versions if v in present]
        return f"versions {there} are still listed ({present})" if there else None

    return _fn(fn)


def _results_of(*kinds: str):
    def verify(resp: dict, vars: dict) -> str | None:
        got = [next((k for k, v in (r or {}).items() if v is not None), None) for r in resp.get("results") or []]
        return None if got == list(kinds) else f"results {got!r}, expected one per operation: {list(kinds)!r}"

    return verify


# -- verifiers -----------------------------------------------------------------------------------------
def _managed(version_var: str | None = None, version: int | None = None):
    def verify(resp: dict, vars: dict) -> str | None:
        if resp.get("managed_versioning") is not True:
            return f"managed_versioning is {resp.get('managed_versioning')!r}, expected true"
        want = vars.get(version_var) if version_var else version
        if want is not None and resp.get("version") != want:
            return f"version {resp.get('version')!r}, expected the namespace's latest {want!r}"
        if want is not None and not (resp.get("metadata") or {}).get("manifest_path"):
            return "no manifest_path of the latest version in metadata"
        return None

    return verify


def _declared_managed(resp: dict, vars: dict) -> str | None:
    return None if resp.get("managed_versioning") is True else "DeclareTable did not answer managed_versioning=true"


def _version_is(path: tuple, var: str, metadata: dict | None = None):
    def verify(resp: dict, vars: dict) -> str | None:
        got: Any = resp
        for key in path:
            got = got[key] if isinstance(got, dict) and key in got else (
                got[key] if isinstance(got, list) and isinstance(key, int) and len(got) > key else None)
        if not isinstance(got, dict) or got.get("version") != vars.get(var):
            return f"version {got!r}, expected version {vars.get(var)!r}"
        if not str(got.get("manifest_path", "")).endswith(".manifest"):
            return f"manifest_path {got.get('manifest_path')!r} is not the published manifest"
        if metadata and any((got.get("metadata") or {}).get(k) != v for k, v in metadata.items()):
            return f"metadata {got.get('metadata')!r} lacks {metadata!r}"
        return None

    return verify


def _listed_descending(resp: dict, vars: dict) -> str | None:
    got = [v.get("version") for v in resp.get("versions") or []]
    return None if got and got == sorted(got, reverse=True) else f"versions {got!r} are not newest first"


def _count_is(var: str):
    def verify(resp: dict, vars: dict) -> str | None:
        return None if resp.get("count") == vars.get(var) else f"count {resp.get('count')!r}, expected {vars.get(var)!r}"

    return verify


def _entry(var: str, **extra) -> dict:
    """A CreateTableVersion request (entry) for the commit pylance staged into ``vars[var]``."""
    return {"id": _TABLE, "version": f"{{{var}_version}}", "manifest_path": f"{{{var}_manifest_path}}", **extra}


_VERSIONS = frozenset({"data"})


def _stored(table: str, var: str, **extra) -> dict:
    return {"id": [NS, table], "version": f"{{{var}_version}}", "manifest_path": f"{{{var}_manifest_path}}", **extra}


def storage_version_checks() -> list[Check]:
    """CreateTableVersion / BatchDeleteTableVersions on storage-managed tables (as pylance's
    DirectoryNamespace answers them) and BatchCommitTables with all four kinds of operation."""
    return [
        Check(
            "versions.storage.create",
            "CreateTableVersion",
            "on a storage-managed table CreateTableVersion puts a staged manifest at the next version's place "
            "in _versions/ (DescribeTableVersion answers it); the same version again, or one that does not "
            "follow the newest in storage, is a conflict (14)",
            (
                _stage_storage_commit("sv", "v1"),
                Call("CreateTableVersion", _stored("sv", "v1"), verify=_version_is(("version",), "v1_version")),
                Call("DescribeTableVersion", {"id": [NS, "sv"], "version": "{v1_version}"},
                     verify=lambda resp, vars: None if (resp.get("version") or {}).get("version") == vars["v1_version"]
                     else f"version {resp.get('version')!r}, expected {vars['v1_version']}"),
                Call("CreateTableVersion", _stored("sv", "v1"), expect=14),
                _stage_storage_commit("sv", "v2"),
                Call("CreateTableVersion", {**_stored("sv", "v2"), "version": 1000}, expect=14),
                Call("CreateTableVersion", _stored("sv", "v2"), verify=_version_is(("version",), "v2_version")),
            ),
            setup=(Call("CreateTable", {"id": [NS, "sv"], "mode": "Create"}, arrow=True),),
            needs=_VERSIONS,
            optional=True,
        ),
        Check(
            "versions.storage.batch_create",
            "BatchCreateTableVersions",
            "on a storage-managed table BatchCreateTableVersions publishes a staged version",
            (
                _stage_storage_commit("sv", "v3"),
                Call("BatchCreateTableVersions", {"entries": [_stored("sv", "v3")]},
                     verify=_version_is(("versions", 0), "v3_version")),
            ),
            needs=_VERSIONS,
            optional=True,
            after="versions.storage.create",
        ),
        Check(
            "versions.storage.delete",
            "BatchDeleteTableVersions",
            "on a storage-managed table BatchDeleteTableVersions deletes the versions' manifests (version 1 is "
            "then not listed, DescribeTableVersion answers 11); the latest version cannot be deleted (13)",
            (
                Call("BatchDeleteTableVersions", {"id": [NS, "sv"], "ranges": [{"start_version": 1, "end_version": 2}]},
                     verify=lambda resp, vars: None if resp.get("deleted_count") == 1
                     else f"deleted_count {resp.get('deleted_count')!r}, expected 1"),
                _versions_absent("sv", 1),
                Call("DescribeTableVersion", {"id": [NS, "sv"], "version": 1}, expect=11),
                Call("BatchDeleteTableVersions",
                     {"id": [NS, "sv"], "ranges": [{"start_version": 2, "end_version": 1000}]}, expect=13),
            ),
            needs=_VERSIONS,
            optional=True,
            after="versions.storage.create",
        ),
        Check(
            "versions.batch_commit.four_kinds",
            "BatchCommitTables",
            "BatchCommitTables takes DeclareTable, CreateTableVersion, DeleteTableVersions and DeregisterTable "
            "in one batch and answers a result of each kind, in order; all are applied",
            (
                _stage_storage_commit("bc", "b1"),
                Call("BatchCommitTables", {"operations": [
                    {"declare_table": {"id": [NS, "bc_new"]}},
                    {"create_table_version": _stored("bc", "b1")},
                    {"deregister_table": {"id": [NS, "bc_gone"]}},
                    {"delete_table_versions": {"id": [NS, "bc"], "ranges": [{"start_version": 1, "end_version": 2}]}},
                ]}, verify=_results_of("declare_table", "create_table_version", "deregister_table",
                                       "delete_table_versions")),
                Call("TableExists", {"id": [NS, "bc_new"]}),
                Call("TableExists", {"id": [NS, "bc_gone"]}, expect=4),
                Call("DescribeTableVersion", {"id": [NS, "bc"], "version": "{b1_version}"}),
                _versions_absent("bc", 1),
            ),
            setup=(
                Call("CreateTable", {"id": [NS, "bc"], "mode": "Create"}, arrow=True),
                Call("DeclareTable", {"id": [NS, "bc_gone"]}),
            ),
            needs=_VERSIONS,
            optional=True,
        ),
        Check(
            "versions.batch_commit.all_or_none",
            "BatchCommitTables",
            "a batch with one failing operation applies none: a version that does not follow the newest is 14, "
            "and the table declared beside it does not exist; a deregistration of a missing table is 4 and "
            "the declaration beside it is not applied either",
            (
                _stage_storage_commit("bc", "b2"),
                Call("BatchCommitTables", {"operations": [
                    {"declare_table": {"id": [NS, "bc_never"]}},
                    {"create_table_version": {**_stored("bc", "b2"), "version": 1000}},
                ]}, expect=14),
                Call("TableExists", {"id": [NS, "bc_never"]}, expect=4),
                Call("BatchCommitTables", {"operations": [
                    {"declare_table": {"id": [NS, "bc_never"]}},
                    {"create_table_version": _stored("bc", "b2")},
                    {"deregister_table": {"id": [NS, "bc_missing"]}},
                ]}, expect=4),
                Call("TableExists", {"id": [NS, "bc_never"]}, expect=4),
                _versions_absent("bc", 1000),
                Call("DescribeTableVersion", {"id": [NS, "bc"], "version": "{b2_version}"}, expect=11),
            ),
            needs=_VERSIONS,
            optional=True,
            after="versions.batch_commit.four_kinds",
        ),
        Check(
            "versions.batch_commit.declares_whole",
            "BatchCommitTables",
            "a batch of declarations only declares all or none: a table named twice (13), an operation "
            "setting two kinds (13) or a table that exists (5) at its end leaves none of the tables before "
            "it declared; a batch with none of those declares every table, answering a result each",
            (
                Call("BatchCommitTables", {"operations": [_declare("bd_one"), _declare("bd_two"), _declare("bd_one")]},
                     expect=13),
                Call("TableExists", {"id": [NS, "bd_one"]}, expect=4),
                Call("TableExists", {"id": [NS, "bd_two"]}, expect=4),
                Call("BatchCommitTables", {"operations": [
                    _declare("bd_one"), {**_declare("bd_two"), "deregister_table": {"id": [NS, "bd_taken"]}}]},
                     expect=13),
                Call("TableExists", {"id": [NS, "bd_one"]}, expect=4),
                Call("TableExists", {"id": [NS, "bd_taken"]}),
                Call("BatchCommitTables", {"operations": [_declare("bd_one"), _declare("bd_taken")]}, expect=5),
                Call("TableExists", {"id": [NS, "bd_one"]}, expect=4),
                Call("BatchCommitTables", {"operations": [_declare("bd_one"), _declare("bd_two")]},
                     verify=_results_of("declare_table", "declare_table")),
                Call("TableExists", {"id": [NS, "bd_one"]}),
                Call("TableExists", {"id": [NS, "bd_two"]}),
            ),
            setup=(Call("DeclareTable", {"id": [NS, "bd_taken"]}),),
            optional=True,
        ),
    ]


def _declare(name: str) -> dict:
    return {"declare_table": {"id": [NS, name]}}


def checks() -> list[Check]:
    return storage_version_checks() + [
        Check(
            "managed.declare",
            "DeclareTable",
            "managed_versioning=true makes a table implementation-managed: DescribeTable answers "
            "managed_versioning=true (and no version before the first commit)",
            (
                Call("DeclareTable", {"id": _TABLE, "properties": {"managed_versioning": "true"}},
                     verify=_declared_managed),
                Call("DescribeTable", {"id": _TABLE, "check_declared": True}, verify=_managed()),
            ),
            needs=_NEEDS,
        ),
        Check(
            "managed.pylance_commits",
            "CreateTableVersion",
            "pylance commits through the namespace; DescribeTable answers its latest version and manifest, "
            "ListTableVersions the namespace's history newest first",
            (
                _appends(2),
                Call("DescribeTable", {"id": _TABLE}, verify=_managed(version=2)),
                Call("ListTableVersions", {"id": _TABLE, "descending": True, "limit": 10},
                     verify=_listed_descending),
            ),
            needs=_NEEDS,
            after="managed.declare",
        ),
        Check(
            "managed.bypass_not_reflected",
            "DescribeTable",
            "a write straight to storage is not reflected: DescribeTable, CountTableRows and pylance "
            "through the namespace keep the published version; the next append through the namespace "
            "becomes the namespace's next version, with its rows and never the bypass rows",
            (
                _fn(_bypass_write),
                Call("DescribeTable", {"id": _TABLE}, verify=_managed("managed_published")),
                Call("CountTableRows", {"id": _TABLE}, verify=_count_is("managed_rows")),
                _fn(_pylance_sees_published_rows),
                _fn(_append_after_bypass),
                Call("CountTableRows", {"id": _TABLE}, verify=_count_is("managed_rows")),
            ),
            needs=_NEEDS,
            after="managed.pylance_commits",
        ),
        Check(
            "managed.version.create",
            "CreateTableVersion",
            "CreateTableVersion publishes a staged manifest with its size, e_tag, metadata and naming "
            "scheme; DescribeTableVersion answers it; the same version again is a conflict (14)",
            (
                _stage("s1"),
                Call("CreateTableVersion", _entry("s1", manifest_size="{s1_manifest_size}", e_tag="{s1_e_tag}",
                                                  metadata={"source": "conformance"},
                                                  naming_scheme="{s1_naming_scheme}"),
                     verify=_version_is(("version",), "s1_version", {"source": "conformance"})),
                Call("DescribeTableVersion", {"id": _TABLE, "version": "{s1_version}"},
                     verify=_version_is(("version",), "s1_version", {"source": "conformance"})),
                Call("CreateTableVersion", _entry("s1"), expect=14),
            ),
            needs=_NEEDS,
            after="managed.pylance_commits",
        ),
        Check(
            "managed.version.gap",
            "CreateTableVersion",
            "a version that does not follow the namespace's latest one is a conflict (14)",
            (
                _stage("s2"),
                Call("CreateTableVersion", {"id": _TABLE, "version": 1000, "manifest_path": "{s2_manifest_path}"},
                     expect=14),
            ),
            needs=_NEEDS,
            after="managed.version.create",
        ),
        Check(
            "managed.version.branch",
            "CreateTableVersion",
            "branches of implementation-managed tables are refused with code 0",
            (
                Call("CreateTableVersion", {**_entry("s2"), "branch": "dev"}, expect=0),
                Call("BatchDeleteTableVersions",
                     {"id": _TABLE, "branch": "dev", "ranges": [{"start_version": 1, "end_version": 2}]}, expect=0),
                Call("CreateTableBranch", {"id": _TABLE, "name": "dev"}, expect=0),
            ),
            needs=_NEEDS,
            after="managed.version.gap",
        ),
        Check(
            "managed.batch_create",
            "BatchCreateTableVersions",
            "BatchCreateTableVersions publishes the staged version",
            (
                _stage("s3"),
                Call("BatchCreateTableVersions", {"entries": [_entry("s3", manifest_size="{s3_manifest_size}")]},
                     verify=_version_is(("versions", 0), "s3_version")),
                Call("DescribeTable", {"id": _TABLE}, verify=_managed("s3_version")),
            ),
            needs=_NEEDS,
            after="managed.version.create",
        ),
        Check(
            "managed.batch_commit",
            "BatchCommitTables",
            "BatchCommitTables publishes a create_table_version operation",
            (
                _stage("s4"),
                Call("BatchCommitTables", {"operations": [{"create_table_version": _entry("s4")}]},
                     verify=_version_is(("results", 0, "create_table_version", "version"), "s4_version")),
                Call("DescribeTable", {"id": _TABLE}, verify=_managed("s4_version")),
            ),
            needs=_NEEDS,
            after="managed.batch_create",
        ),
        Check(
            "managed.batch_delete",
            "BatchDeleteTableVersions",
            "BatchDeleteTableVersions forgets versions: version 1 is then not found (11)",
            (
                Call("BatchDeleteTableVersions", {"id": _TABLE, "ranges": [{"start_version": 1, "end_version": 2}]},
                     verify=lambda resp, vars: None if resp.get("deleted_count") == 1
                     else f"deleted_count {resp.get('deleted_count')!r}, expected 1"),
                Call("DescribeTableVersion", {"id": _TABLE, "version": 1}, expect=11),
            ),
            needs=_NEEDS,
            after="managed.batch_commit",
        ),
    ]
