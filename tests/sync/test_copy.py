"""`lance-ns sync --mode copy`: the data copied into the destination's own locations,
each copied version checked before the destination's entry is made; with
``--versions all`` every version and tag is there, so time travel works at the
destination.  A local directory into a directory on S3 (SeaweedFS), a copy killed by
SIGKILL at random points and resumed, data the destination already holds at the
place a copy would go, and a destination that cannot say where a copy would go."""

from __future__ import annotations

import subprocess
import sys

import lance
import pyarrow as pa
import pytest

import lance_ns
from lance_ns import dataset_copy, sync, walk
from lance_ns.errors import code_of

from .test_sync import _ipc, _state, assert_mirrored, fill, killed_runs


def history(ns, table_id, storage_options=None) -> dict:
    """version -> that version's rows, and the tags, as pylance reads them through ``ns``."""
    ds = lance.dataset(namespace_client=ns, table_id=table_id, storage_options=storage_options)
    rows = {v["version"]: ds.checkout_version(v["version"]).to_table().to_pylist() for v in ds.versions()}
    return {"versions": rows, "tags": {name: t["version"] for name, t in ds.tags.list().items()}}


def lake_with_history(tmp_path):
    src = lance_ns.connect("dir", {"root": str(tmp_path / "src")})
    fill(src, "lake")
    ds = lance.write_dataset(pa.table({"x": [5, 6, 7]}), namespace_client=src, table_id=["lake", "t0"], mode="append")
    ds.delete("x = 6")  # a deletion file in the history
    ds.tags.create("before-delete", 3)
    ds.create_scalar_index("x", "BTREE")  # index files
    return src


def test_versions_all_keeps_every_version_and_tag_and_the_copy_is_the_destinations_own(tmp_path):
    src = lake_with_history(tmp_path)
    dst = lance_ns.connect("dir", {"root": str(tmp_path / "dst")})  # no external locations: the copy is inside
    report = sync.sync(src, dst, mode="copy", versions="all")
    assert report.failed == [] and sorted(s.action for s in report.done) == ["copy"] * 4 + ["create"] * 2 + ["declare"]
    for table in (["lake", "t0"], ["lake", "t1"], ["lake", "inner", "t0"], ["lake", "inner", "t1"]):
        held = dst.describe_table({"id": ["lake", *table[1:]] if table[0] == "lake" else table})
        assert held.location.startswith(str(tmp_path / "dst")), held.location
        assert history(dst, table) == history(src, table), table
    assert history(dst, ["lake", "t0"])["tags"] == {"before-delete": 3}
    old = lance.dataset(namespace_client=dst, table_id=["lake", "t0"], version=1).to_table()
    assert old.column("x").to_pylist() == [0]  # time travel to a version before the delete
    assert lance.dataset(namespace_client=dst, table_id=["lake", "t0"]).list_indices()  # the index came along
    assert dst.describe_table({"id": ["lake", "declared"], "check_declared": True}).is_only_declared
    # a second run plans nothing, writes nothing
    files = sorted(p for p in (tmp_path / "dst").rglob("*"))
    assert sync.plan(src, dst, mode="copy", versions="all").writes == []
    assert sync.sync(src, dst, mode="copy", versions="all").done == []
    assert sorted(p for p in (tmp_path / "dst").rglob("*")) == files
    # the copy is the destination's: a drop there deletes it, and the source keeps its own
    copy_at = dst.describe_table({"id": ["lake", "t1"]}).location
    dst.drop_table({"id": ["lake", "t1"]})
    assert lance.dataset(namespace_client=src, table_id=["lake", "t1"]).count_rows() == 3
    assert storage_holds_no_table(copy_at)


def storage_holds_no_table(location: str) -> bool:
    from lance_ns import storage

    return not storage.has_versions(location)


def test_versions_latest_copies_one_version(tmp_path):
    src = lake_with_history(tmp_path)
    dst = lance_ns.connect("memory", {"root": str(tmp_path / "dst")})
    sync.sync(src, dst, ["lake"], ["lake"], mode="copy", include=["lake.t0"])
    theirs = lance.dataset(namespace_client=src, table_id=["lake", "t0"])
    ours = lance.dataset(namespace_client=dst, table_id=["lake", "t0"])
    assert [v["version"] for v in ours.versions()] == [theirs.version]
    assert ours.to_table().sort_by("x") == theirs.to_table().sort_by("x")
    with pytest.raises(Exception):
        lance.dataset(namespace_client=dst, table_id=["lake", "t0"], version=1).to_table()


@pytest.mark.slow
def test_a_local_directory_into_a_directory_on_s3(tmp_path):
    """The issue's pair: local ``dir`` -> ``dir`` on S3 (SeaweedFS), every version."""
    from tests.services.seaweedfs import seaweedfs_server

    src = lake_with_history(tmp_path)
    with seaweedfs_server() as s3:
        opts = s3.storage_options()
        root = f"s3://{s3.create_bucket('lance-sync-copy')}/lake"
        dst = lance_ns.connect("dir", {"root": root, **{f"storage.{k}": v for k, v in opts.items()}})
        report = sync.sync(src, dst, mode="copy", versions="all")
        assert report.failed == [], report.failed
        for table in walk.tree(src, []).tables:
            if table[-1] == "declared":
                continue
            assert dst.describe_table({"id": table}).location.startswith(root)
            assert history(dst, table, opts) == history(src, table), table
        assert lance.dataset(namespace_client=dst, table_id=["lake", "t0"], version=1,
                             storage_options=opts).to_table().column("x").to_pylist() == [0]
        assert sync.sync(src, dst, mode="copy", versions="all").done == []


def test_data_where_the_copy_would_go_is_left_and_the_copy_goes_beside_it(tmp_path):
    src = lance_ns.connect("dir", {"root": str(tmp_path / "src")})
    fill(src, "lake", nested=False)
    dst = lance_ns.connect("memory", {"root": str(tmp_path / "dst")})
    dst.create_namespace({"id": ["lake"]})
    taken = dst.table_location_for(["lake", "t0"])
    lance.write_dataset(pa.table({"y": ["someone else's"]}), taken)  # no entry names it
    sync.sync(src, dst, ["lake"], ["lake"], mode="copy")
    held = dst.describe_table({"id": ["lake", "t0"]}).location
    assert held != taken and held.startswith(taken[: -len(".lance")])
    assert lance.dataset(taken).to_table().column("y").to_pylist() == ["someone else's"]
    assert sync.sync(src, dst, ["lake"], ["lake"], mode="copy", versions="all").done == []


def test_copy_mode_into_a_server_that_cannot_say_where_is_refused_before_anything_is_written(tmp_path):
    from lance_ns.server import run_server_in_thread

    src = lance_ns.connect("dir", {"root": str(tmp_path / "src")})
    fill(src, "lake", nested=False)
    served = lance_ns.connect("dir", {"root": str(tmp_path / "served")})
    with run_server_in_thread(served) as server:
        dst = lance_ns.connect("rest", {"uri": server.url})
        with pytest.raises(Exception) as refused:
            sync.sync(src, dst, mode="copy")
        assert code_of(refused.value) == 0 and "copy mode" in str(refused.value)
        assert served.list_namespaces({"id": []}).namespaces == []


def _cli(*args):
    return [sys.executable, "-m", "lance_ns.cli", "sync", *args]


@pytest.mark.slow
def test_a_copy_killed_at_random_points_and_resumed_ends_as_an_uninterrupted_one(tmp_path):
    src_root = tmp_path / "src"
    src = lance_ns.connect("dir", {"root": str(src_root)})
    for top in ("a", "b"):
        fill(src, top, tables=3)
    command = lambda root: _cli("--mode", "copy", "--versions", "all", "--from-impl", "dir",  # noqa: E731
                                "--from-prop", f"root={src_root}", "--to-impl", "dir", "--to-prop", f"root={root}")
    whole = None
    for seed, dst in killed_runs(command, tmp_path / "whole", 4, tmp_path):
        if whole is None:
            whole_ns = lance_ns.connect("dir", {"root": str(tmp_path / "whole")})
            whole = {t: history(whole_ns, list(t)) for t in _state(whole_ns)["tables"] if t[-1] != "declared"}
        dst_ns = lance_ns.connect("dir", {"root": str(dst)})
        assert {t: history(dst_ns, list(t)) for t in _state(dst_ns)["tables"] if t[-1] != "declared"} == whole, seed
        assert_mirrored(src, dst_ns, [], [], copied=True)
        # no table copied twice: the same table directories as the uninterrupted run's (a
        # copy begun again beside an interrupted one would add one), no half-written file
        assert tables_dirs(dst) == tables_dirs(tmp_path / "whole")
        assert not list(dst.rglob("*.partial"))


def tables_dirs(root) -> tuple[list[str], int]:
    """The copied tables' directories (their names drawn from the source: the same on every
    run), and how many declared tables have one (its name drawn at random)."""
    names = [p.name for p in root.iterdir() if p.name != "__manifest"]
    return sorted(n for n in names if not n.endswith("$declared")), sum(n.endswith("$declared") for n in names)


def test_the_copy_plan_names_versions_files_and_bytes(tmp_path):
    src = lake_with_history(tmp_path)
    ds = lance.dataset(namespace_client=src, table_id=["lake", "t0"])
    every = dataset_copy.plan_copy(ds, "all")
    assert every.versions == list(range(1, ds.version + 1))
    assert [p for _, p, _ in every.manifests] and all(p.startswith("_versions/") for _, p, _ in every.manifests)
    assert any(p.startswith("_deletions/") for p in every.files) and any(p.startswith("_indices/") for p in every.files)
    assert list(every.tags) == ["_refs/tags/before-delete.json"]
    latest = dataset_copy.plan_copy(ds, "latest")
    assert latest.versions == [ds.version] and not latest.tags and latest.size < every.size
    planned = sync.plan(src, lance_ns.connect("memory", {"root": str(tmp_path / "m")}), mode="copy", versions="all")
    step = next(s for s in planned.steps if s.target == ["lake", "t0"])
    assert step.to_dict()["copy"]["versions"] == every.versions and f"versions 1-{ds.version}" in step.reason


class Interrupted(Exception):
    pass


def test_a_copy_cut_after_any_file_shows_a_whole_prefix_and_is_finished_in_place(tmp_path, monkeypatch):
    """Deterministic: a copy stopped after its k-th file, for every k.  No entry is made
    before the copy is checked; what a reader finds at the location meanwhile is nothing
    or whole versions; the next run finishes the copy in the same place."""
    src = lake_with_history(tmp_path)
    theirs = lance.dataset(namespace_client=src, table_id=["lake", "t0"])
    files = len(dataset_copy.plan_copy(theirs, "all").all_files)
    real = dataset_copy._copier
    for k in range(files):
        dst = lance_ns.connect("dir", {"root": str(tmp_path / f"dst{k}")})
        copied = []

        def cut_after_k(*args, **kwargs):
            copy_one = real(*args, **kwargs)

            def one(path):
                if len(copied) == k:
                    raise Interrupted(f"cut before {path}")
                copied.append(path)
                return copy_one(path)
            return one

        monkeypatch.setattr(dataset_copy, "_copier", cut_after_k)
        report = sync.sync(src, dst, mode="copy", versions="all", include=["lake.t0"])
        assert [s.target for s, _, _ in report.failed] == [["lake", "t0"]], k
        assert dst.list_tables({"id": ["lake"]}).tables == [], k  # no entry before the check
        location = report.failed[0][0].location
        if any(p.startswith("_versions/") for p in copied):  # a reader sees whole versions only
            seen = lance.dataset(location)
            for v in seen.versions():
                assert seen.checkout_version(v["version"]).to_table().num_rows == \
                    theirs.checkout_version(v["version"]).count_rows(), (k, v)
        monkeypatch.setattr(dataset_copy, "_copier", real)
        done = sync.sync(src, dst, mode="copy", versions="all", include=["lake.t0"])
        assert done.failed == [] and dst.describe_table({"id": ["lake", "t0"]}).location == location, k
        assert history(dst, ["lake", "t0"]) == history(src, ["lake", "t0"]), k


def test_a_copy_replacing_a_destination_table_leaves_its_data(tmp_path):
    src = lance_ns.connect("dir", {"root": str(tmp_path / "src")})
    fill(src, "lake", nested=False)
    dst = lance_ns.connect("dir", {"root": str(tmp_path / "dst")})
    dst.create_namespace({"id": ["lake"]})
    dst.create_table({"id": ["lake", "t0"]}, _ipc(pa.table({"z": [1, 2, 3]})))
    theirs = dst.describe_table({"id": ["lake", "t0"]}).location
    with pytest.raises(Exception) as refused:
        sync.sync(src, dst, ["lake"], ["lake"], mode="copy")
    assert code_of(refused.value) == 5
    sync.sync(src, dst, ["lake"], ["lake"], mode="copy", versions="all", on_conflict="replace")
    assert history(dst, ["lake", "t0"]) == history(src, ["lake", "t0"])
    assert dst.describe_table({"id": ["lake", "t0"]}).location != theirs
    assert lance.dataset(theirs).to_table().column("z").to_pylist() == [1, 2, 3]  # deregistered, never dropped
    assert sync.sync(src, dst, ["lake"], ["lake"], mode="copy", versions="all").done == []
