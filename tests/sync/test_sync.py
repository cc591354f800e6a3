"""`lance-ns sync` / lance_ns.sync in register mode, on real pairs of backends: what
the destination holds is checked table by table, a second run plans nothing, a run
killed by SIGKILL and resumed ends as an uninterrupted one, and what the plan refuses
is refused before anything is written."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Callable

import lance
import pyarrow as pa
import pytest

import lance_ns
from lance_ns import sync, walk
from lance_ns.errors import code_of

RESERVED = {"table_type", "managed_versioning", "lance_ns.owned", "lance_ns.versions"}


def _tree(ns, parts):
    found = walk.tree(ns, parts)
    return found.namespaces, found.tables


def assert_mirrored(src, dst, src_id, dst_id, storage_options=None, copied=False):
    """Every namespace and table below src_id is at dst_id in dst: namespace properties,
    table locations (``copied``: the destination's own) and properties, row counts and
    versions, read through dst."""
    namespaces, tables = _tree(src, src_id)
    moved = lambda parts: dst_id + parts[len(src_id):]  # noqa: E731
    held_namespaces, held_tables = _tree(dst, dst_id)
    assert sorted(map(tuple, held_namespaces)) == sorted(tuple(moved(n)) for n in namespaces)
    assert sorted(map(tuple, held_tables)) == sorted(tuple(moved(t)) for t in tables)
    for parts in namespaces:
        want = sync._carried(src.describe_namespace({"id": parts}).properties, sync._PLACEMENT_PROPERTIES)
        held = dst.describe_namespace({"id": moved(parts)}).properties or {}
        assert want.get("owner") == "team-a" or want.get("tier") == "gold", want
        assert want.items() <= held.items(), parts
    for parts in tables:
        want = src.describe_table({"id": parts, "check_declared": True})
        held = dst.describe_table({"id": moved(parts), "check_declared": True})
        assert sync._same_location(held.location, want.location) != copied, parts
        props = {k: v for k, v in (want.properties or {}).items() if k not in RESERVED and not k.startswith("lance_ns.")}
        assert props.items() <= (held.properties or {}).items(), parts
        if want.is_only_declared:
            assert held.is_only_declared, parts
            continue
        theirs = lance.dataset(namespace_client=src, table_id=parts, storage_options=storage_options)
        ours = lance.dataset(namespace_client=dst, table_id=moved(parts), storage_options=storage_options)
        assert (ours.count_rows(), ours.version, ours.schema) == (theirs.count_rows(), theirs.version, theirs.schema)


def fill(ns, top: str, storage_options=None, nested: bool = True, tables: int = 2, parent=()):
    """A small lake below ``parent + [top]``: properties on namespaces and tables, several
    versions, a declared-only table and (``nested``) a namespace below."""
    top = [*parent, top]
    ns.create_namespace({"id": top, "properties": {"owner": "team-a"}})
    parents = [top, [*top, "inner"]] if nested else [top]
    if nested:
        ns.create_namespace({"id": [*top, "inner"], "properties": {"tier": "gold"}})
    for parent in parents:
        for i in range(tables):
            tid = parent + [f"t{i}"]
            ns.create_table({"id": tid, "properties": {"source": "sync-test"}},
                            _ipc(pa.table({"x": list(range(i + 1))})))
            lance.write_dataset(pa.table({"x": [99]}), namespace_client=ns, table_id=tid, mode="append",
                                storage_options=storage_options)
    ns.declare_table({"id": [*top, "declared"], "properties": {"k": "v"}})


def _ipc(table):
    from lance_ns.datasets import table_to_ipc_stream

    return table_to_ipc_stream(table)


def _no_writes_left(src, dst, src_id, dst_id):
    again = sync.plan(src, dst, src_id, dst_id)
    assert again.writes == [] and again.refusals == [], again.to_dict()
    assert sync.sync(src, dst, src_id, dst_id).done == []


def test_dir_to_memory_mirrors_the_tree_and_the_second_run_plans_nothing(tmp_path):
    src = lance_ns.connect("dir", {"root": str(tmp_path / "src")})
    dst = lance_ns.connect("memory", {"root": str(tmp_path / "dst")})
    fill(src, "lake")
    report = sync.sync(src, dst, ["lake"], ["mirror", "lake"])
    assert report.failed == [] and len(report.done) == 3 + 5  # mirror, mirror.lake, mirror.lake.inner; 5 tables
    assert_mirrored(src, dst, ["lake"], ["mirror", "lake"])
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    _no_writes_left(src, dst, ["lake"], ["mirror", "lake"])
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # not a file more
    # the destination does not own the data: a drop there leaves it for the source
    dst.drop_table({"id": ["mirror", "lake", "t1"]})
    assert lance.dataset(namespace_client=src, table_id=["lake", "t1"]).count_rows() == 3


def test_on_conflict_fail_refuses_everything_skip_leaves_replace_deregisters(tmp_path):
    src = lance_ns.connect("dir", {"root": str(tmp_path / "src")})
    dst = lance_ns.connect("memory", {"root": str(tmp_path / "dst")})
    fill(src, "lake", nested=False)
    dst.create_namespace({"id": ["lake"], "properties": {"owner": "team-a"}})
    dst.create_table({"id": ["lake", "t0"]}, _ipc(pa.table({"x": [5, 6, 7, 8]})))
    other = dst.describe_table({"id": ["lake", "t0"]}).location
    with pytest.raises(Exception) as refused:
        sync.sync(src, dst)
    assert code_of(refused.value) == 5 and "lake.t0" in str(refused.value)
    assert dst.list_tables({"id": ["lake"]}).tables == ["t0"]  # nothing written
    report = sync.sync(src, dst, on_conflict="skip")
    assert [s.target for s in report.skipped if s.kind == "table"] == [["lake", "t0"]]
    assert dst.describe_table({"id": ["lake", "t0"]}).location == other
    sync.sync(src, dst, on_conflict="replace")
    assert_mirrored(src, dst, [], [])
    assert lance.dataset(other).count_rows() == 4  # deregistered, never dropped


def test_include_and_exclude_choose_the_ids(tmp_path):
    src = lance_ns.connect("dir", {"root": str(tmp_path / "src")})
    dst = lance_ns.connect("memory", {"root": str(tmp_path / "dst")})
    fill(src, "lake")
    sync.sync(src, dst, include=["lake.inner.*"], exclude=["*.t1"])
    assert walk.tree(dst, []).tables == [["lake", "inner", "t0"]]


def test_what_the_plan_refuses_is_refused_before_anything_is_written(tmp_path):
    src = lance_ns.connect("dir", {"root": str(tmp_path / "src")})
    fill(src, "lake")
    strict = lance_ns.connect("dir", {"root": str(tmp_path / "strict")})  # no external locations
    with pytest.raises(Exception) as refused:
        sync.sync(src, strict)
    assert code_of(refused.value) == 13 and "allow_external_locations" in str(refused.value)
    assert strict.list_namespaces({"id": []}).namespaces == []
    for src_id, dst_id in (([], []), (["lake"], ["lake", "copy"]), (["lake", "inner"], ["lake"])):
        with pytest.raises(Exception) as overlap:
            sync.sync(src, src, src_id, dst_id)
        assert code_of(overlap.value) == 13, (src_id, dst_id)
    with pytest.raises(Exception) as missing:
        sync.sync(src, strict, ["nowhere"])
    assert code_of(missing.value) == 1
    assert walk.tree(src, []).tables and strict.list_namespaces({"id": []}).namespaces == []


@pytest.mark.slow
def test_dir_into_glue_on_moto_and_a_tree_too_deep_for_it(tmp_path):
    from tests.conformance.backends import glue as glue_backend

    src = lance_ns.connect("dir", {"root": str(tmp_path / "src")})
    db = f"s{uuid.uuid4().hex[:8]}"  # moto's Glue outlives this test
    fill(src, db, nested=False)
    fill(src, db + "deep")
    with glue_backend.BACKENDS[0].start(tmp_path / "g") as aws:
        glue = aws.connect()
        with pytest.raises(Exception) as deep:
            sync.sync(src, glue, [db + "deep"], [db + "deep"])
        assert code_of(deep.value) == 13 and f"{db}deep.inner" in str(deep.value)
        assert db + "deep" not in glue.list_namespaces({"id": []}).namespaces  # nothing written
        sync.sync(src, glue, [db], [db])
        assert_mirrored(src, glue, [db], [db])
        _no_writes_left(src, glue, [db], [db])


def _started(name: str, tmp):
    from tests.conformance.backends import hive, iceberg, unity

    return next(b for m in (hive, iceberg, unity) for b in m.BACKENDS if b.name == name).start(tmp)


@pytest.mark.slow
def test_a_hive_metastore_into_unity(tmp_path):
    """A real Hive Metastore (2.3, its catalog ``hive``) into the Unity Catalog contract double."""
    (tmp_path / "h").mkdir(), (tmp_path / "u").mkdir()
    with _started("hive3", tmp_path / "h") as hms, _started("unity", tmp_path / "u") as uc:
        src, dst = hms.connect(), uc.connect()
        top = f"s{uuid.uuid4().hex[:8]}"
        fill(src, top, nested=False, parent=hms.parent)
        sync.sync(src, dst, [*hms.parent, top], [*uc.parent, top])
        assert_mirrored(src, dst, [*hms.parent, top], [*uc.parent, top])
        _no_writes_left(src, dst, [*hms.parent, top], [*uc.parent, top])


@pytest.mark.slow
def test_the_iceberg_rest_reference_into_dir(tmp_path):
    (tmp_path / "i").mkdir()
    with _started("iceberg-ref", tmp_path / "i") as ice:
        src = ice.connect()
        dst = lance_ns.connect("dir", {"root": str(tmp_path / "dst"), "allow_external_locations": "true"})
        top = f"s{uuid.uuid4().hex[:8]}"
        fill(src, top, storage_options=ice.storage_options, nested=False, parent=ice.parent)
        sync.sync(src, dst, [*ice.parent, top], [top])
        assert_mirrored(src, dst, [*ice.parent, top], [top], ice.storage_options)
        _no_writes_left(src, dst, [*ice.parent, top], [top])


def _cli(*args, env=None):
    return [sys.executable, "-m", "lance_ns.cli", "sync", *args]


def killed_runs(command: Callable[[Path], list[str]], whole: Path, seeds: int, tmp_path: Path):
    """``command(root)`` run once whole into ``whole``, then, for each seed, killed by SIGKILL at a
    random point of about that run's time and run again to its end: yields each (seed, root)."""
    started = time.monotonic()
    subprocess.run(command(whole), check=True, capture_output=True)
    took = time.monotonic() - started
    for seed in range(seeds):
        dst = tmp_path / f"killed{seed}"
        proc = subprocess.Popen(command(dst), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(random.Random(seed).uniform(0.3, took))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        resumed = subprocess.run(command(dst), capture_output=True, text=True)
        assert resumed.returncode == 0, resumed.stderr
        yield seed, dst


def _state(ns) -> dict:
    namespaces, tables = _tree(ns, [])
    return {
        "namespaces": sorted(map(tuple, namespaces)),
        "tables": {tuple(t): (ns.describe_table({"id": t, "check_declared": True}).location,
                              dict(ns.describe_table({"id": t}).properties or {})) for t in tables},
    }


@pytest.mark.slow
def test_a_sync_killed_at_random_points_and_resumed_ends_as_an_uninterrupted_one(tmp_path):
    src_root = tmp_path / "src"
    src = lance_ns.connect("dir", {"root": str(src_root)})
    for top in ("a", "b", "c"):
        fill(src, top, tables=3)
    command = lambda root: _cli("--from-impl", "dir", "--from-prop", f"root={src_root}", "--to-impl", "dir",  # noqa: E731
                                "--to-prop", f"root={root}", "--to-prop", "allow_external_locations=true")
    whole = None
    for seed, dst in killed_runs(command, tmp_path / "whole", 3, tmp_path):
        whole = whole or _state(lance_ns.connect("dir", {"root": str(tmp_path / "whole")}))
        assert len(whole["tables"]) == 3 * 7
        assert _state(lance_ns.connect("dir", {"root": str(dst)})) == whole, seed
        dst_ns = lance_ns.connect("dir", {"root": str(dst), "allow_external_locations": "true"})
        assert_mirrored(src, dst_ns, [], [])


@pytest.mark.slow
def test_the_cli_prints_the_plan_and_exits_as_its_refusal(tmp_path):
    src = lance_ns.connect("dir", {"root": str(tmp_path / "src")})
    fill(src, "lake", nested=False)
    base = ["--from-impl", "dir", "--from-prop", f"root={tmp_path / 'src'}", "--to-impl", "dir",
            "--to-prop", f"root={tmp_path / 'dst'}"]
    env = {**os.environ, "COLUMNS": "200"}
    refused = subprocess.run(_cli(*base), capture_output=True, text=True, env=env)
    assert refused.returncode == 2 and "allow_external_locations" in refused.stderr
    assert not (tmp_path / "dst").exists() or not any((tmp_path / "dst").iterdir())
    ok = base + ["--to-prop", "allow_external_locations=true"]
    planned = subprocess.run(_cli(*ok, "--dry-run", "--json"), capture_output=True, text=True, env=env)
    import json

    steps = json.loads(planned.stdout)["steps"]
    assert [(s["action"], s["target"]) for s in steps][:2] == [("create", ["lake"]), ("declare", ["lake", "declared"])]
    done = subprocess.run(_cli(*ok), capture_output=True, text=True, env=env)
    assert done.returncode == 0 and "4 done" in done.stdout, done.stdout
    again = subprocess.run(_cli(*ok), capture_output=True, text=True, env=env)
    assert "0 done, 4 already in sync" in again.stdout


def test_mounts_on_either_side_and_an_unknown_mount(tmp_path):
    src = lance_ns.connect("dir", {"root": str(tmp_path / "src")})
    fill(src, "lake", nested=False)
    lake = lance_ns.connect("mounts", {"local.impl": "dir", "local.root": str(tmp_path / "local"),
                                       "local.allow_external_locations": "true",
                                       "team.impl": "memory", "team.root": str(tmp_path / "team")})
    with pytest.raises(Exception) as unknown:
        sync.sync(src, lake, ["lake"], ["nowhere", "lake"])
    assert code_of(unknown.value) == 1 and "nowhere" in str(unknown.value)
    with pytest.raises(Exception) as at_the_root:  # the source's top level would be mounts: none is named so
        sync.sync(src, lake, [], [])
    assert code_of(at_the_root.value) == 1 and "no mount named 'lake'" in str(at_the_root.value)
    assert walk.tree(lake, ["local"]).namespaces == []  # nothing written
    sync.sync(src, lake, ["lake"], ["local", "lake"])
    assert_mirrored(src, lake, ["lake"], ["local", "lake"])
    assert_mirrored(src, lance_ns.connect("dir", {"root": str(tmp_path / "local"), "allow_external_locations": "true"}),
                    ["lake"], ["lake"])  # what the mount's own client sees
    sync.sync(lake, lake, ["local", "lake"], ["team", "copied"], mode="copy")  # one mount into another
    assert_mirrored(lake, lake, ["local", "lake"], ["team", "copied"], copied=True)
