"""What issue 14 asks of the command line: options anywhere, --version, modes in
any spelling, the protocol's JSON names, readable tables, new table commands,
confirmation before deleting data, secrets never printed."""

from __future__ import annotations

import io
import json
import re

import lance
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lance_ns
from lance_ns.cli.app import EXIT_ERROR, EXIT_INVALID, EXIT_NOT_FOUND, EXIT_UNAVAILABLE
from lance_ns.cli.output import Output
from lance_ns.redact import MASK

from .broken import RecordingNamespace


@pytest.fixture
def root(tmp_path):
    return tmp_path / "lake"


@pytest.fixture
def events(cli, root):
    """db.events: 3 rows (version 1), then 1 more (version 2)."""
    ns = lance_ns.connect("dir", {"root": str(root)})
    ns.create_namespace({"id": ["db"]})
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("who", pa.struct([("name", pa.string()), ("tags", pa.list_(pa.string()))]))])
    rows = pa.table({"id": [1, 2, 3], "who": [{"name": n, "tags": ["x"]} for n in "abc"]}, schema=schema)
    lance.write_dataset(rows, namespace_client=ns, table_id=["db", "events"], mode="create")
    lance.write_dataset(rows.slice(0, 1), namespace_client=ns, table_id=["db", "events"], mode="append")
    return ["--impl", "dir", "--prop", f"root={root}"]


def test_version(cli):
    r = cli("--version")
    assert r.rc == 0 and re.match(r"lance-ns \d+\.\d+\.\d+ \(pylance \d", r.out)


def test_options_before_or_after_the_subcommand(cli, root, tmp_path):
    conn = ["--impl", "dir", "--prop", f"root={root}"]
    assert cli(*conn, "namespace", "create", "db").rc == 0
    assert cli(*conn, "--json", "namespace", "list").json()["namespaces"] == ["db"]
    assert cli("namespace", "list", "--json", *conn).json()["namespaces"] == ["db"]
    # split between the two places: --impl before, --prop after
    assert cli("--impl", "dir", "namespace", "list", "--prop", f"root={root}", "--json").json()["namespaces"] == ["db"]
    # after the subcommand wins
    other = ["--impl", "dir", "--prop", f"root={tmp_path / 'other'}"]
    assert cli(*conn, "namespace", "list", "--json", *other).json()["namespaces"] == []
    assert cli("--delimiter", "/", *conn, "namespace", "create", "db/x.y").rc == 0
    assert cli(*conn, "namespace", "list", "db", "--json").json()["namespaces"] == ["x.y"]


@pytest.mark.parametrize("spelling", ["exist_ok", "exist-ok", "ExistOk", "EXIST_OK", "existok"])
def test_modes_in_any_spelling_the_api_accepts(cli, root, spelling):
    conn = ["--impl", "dir", "--prop", f"root={root}"]
    assert cli("namespace", "create", "db", *conn).rc == 0
    assert cli("namespace", "create", "db", "--mode", spelling, *conn).rc == 0


def test_unknown_mode_is_a_usage_error(cli, root):
    r = cli("namespace", "create", "db", "--mode", "sometimes", "--impl", "dir", "--prop", f"root={root}")
    assert r.rc == EXIT_INVALID and "expected one of: Create, ExistOk, Overwrite" in r.err
    assert not root.exists()


def test_json_uses_the_protocol_field_names(cli, events):
    d = cli("table", "describe", "db.events", "--json", *events).json()
    assert "var_schema" not in d and [f["name"] for f in d["schema"]["fields"]] == ["id", "who"]
    assert d["version"] == 2 and d["stats"]["num_fragments"] == 2
    assert cli("table", "schema", "db.events", "--json", *events).json() == d["schema"]
    old = cli("table", "describe", "db.events", "--version", "1", "--json", *events).json()
    assert old["version"] == 1


def test_describe_is_readable(cli, events):
    out = cli("table", "describe", "db.events", *events).out
    for label, value in (("version", "2"), ("rows", "4")):
        assert re.search(rf"│ {label}\s+│ {value}\s", out), (label, out)
    assert re.search(r"│ size\s+│ \d+(\.\d)? (B|KiB)", out)
    assert re.search(r"│ committed\s+│ \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", out)
    assert "└── who: struct" in out or "├── who: struct" in out


def test_describe_of_a_declared_table(cli, events):
    assert cli("table", "declare", "db.later", "--property", "team=ml", *events).rc == 0
    r = cli("table", "describe", "db.later", *events)
    assert r.rc == 0 and "declared (no data yet)" in r.out and re.search(r"property team\s+│ ml", r.out)


def test_schema_is_a_tree(cli, events):
    out = cli("table", "schema", "db.events", *events).out
    assert out.splitlines() == [
        "table db.events",
        "├── id: int64 not null",
        "└── who: struct",
        "    ├── name: utf8",
        "    └── tags: list<utf8>",
    ]


def test_versions_have_readable_times(cli, events):
    out = cli("table", "versions", "db.events", *events).out
    assert len(re.findall(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", out)) == 2
    assert not re.search(r"\b1\d{12}\b", out)  # no raw epoch milliseconds
    raw = cli("table", "versions", "db.events", "--json", *events).json()["versions"]
    assert all(isinstance(v["timestamp_millis"], int) for v in raw)  # scripts keep the protocol's value


def test_head(cli, events):
    rows = cli("table", "head", "db.events", "2", "--json", *events).json()
    assert [r["id"] for r in rows] == [1, 2] and rows[0]["who"]["name"] == "a"
    assert cli("table", "head", "db.events", "--columns", "id", "--json", *events).json() == [{"id": i} for i in (1, 2, 3, 1)]
    assert cli("table", "head", "db.events", "0", "--json", *events).json() == []
    human = cli("table", "head", "db.events", "1", *events).out
    assert "id" in human and "'name': 'a'" in human
    assert cli("table", "head", "db.events", "--columns", "nope", *events).rc != 0
    assert cli("table", "head", "db.nope", *events).rc == EXIT_NOT_FOUND


@pytest.mark.parametrize("suffix", ["parquet", "csv", "json"])
def test_create_from_a_file(cli, events, tmp_path, suffix):
    src = tmp_path / f"orders.{suffix}"
    if suffix == "parquet":
        pq.write_table(pa.table({"order_id": [1, 2], "amount": [1.5, 2.5]}), src)
    elif suffix == "csv":
        src.write_text("order_id,amount\n1,1.5\n2,2.5\n")
    else:
        src.write_text('{"order_id": 1, "amount": 1.5}\n{"order_id": 2, "amount": 2.5}\n')
    r = cli("table", "create", "db.orders", "--from", src, "--property", "team=ml", *events)
    assert r.rc == 0, r.err
    assert "2 rows, 2 columns" in r.out
    assert cli("table", "head", "db.orders", "--json", *events).json() == [
        {"order_id": 1, "amount": 1.5}, {"order_id": 2, "amount": 2.5}]
    assert cli("table", "describe", "db.orders", "--json", *events).json()["properties"]["team"] == "ml"
    assert cli("table", "create", "db.orders", "--from", src, *events).rc == 4  # exists
    assert cli("table", "create", "db.orders", "--from", src, "--mode", "exist_ok", *events).rc == 0
    assert cli("table", "create", "db.orders", "--from", src, "--mode", "Overwrite", *events).rc == 0


def test_create_from_a_bad_file(cli, events, tmp_path):
    (tmp_path / "x.txt").write_text("hello")
    (tmp_path / "bad.parquet").write_text("not parquet")
    for argv, message in (
        (["--from", tmp_path / "x.txt"], "pass --format"),
        (["--from", tmp_path / "bad.parquet"], "cannot read"),
        (["--from", tmp_path / "absent.csv"], "is not a file"),
    ):
        r = cli("table", "create", "db.t", *argv, *events)
        assert r.rc == EXIT_INVALID and message in r.err and len(r.err.splitlines()) == 1, r.err
    assert cli("table", "exists", "db.t", *events).rc == EXIT_NOT_FOUND  # nothing declared on the way


def test_head_shows_data_columns_named_like_secrets(cli, root):
    ns = lance_ns.connect("dir", {"root": str(root)})
    data = pa.table({"api_key": ["k-1234567"], "password_hint": ["pet name"]})
    lance.write_dataset(data, namespace_client=ns, table_id=["keys"], mode="create")
    rows = cli("table", "head", "keys", "--json", "--impl", "dir", "--prop", f"root={root}").json()
    assert rows == [{"api_key": "k-1234567", "password_hint": "pet name"}]  # data, not configuration


def test_tags_and_restore(cli, events):
    assert cli("table", "tags", "create", "db.events", "first", "--version", "1", *events).rc == 0
    assert cli("table", "tags", "create", "db.events", "latest", *events).rc == 0
    tags = cli("table", "tags", "list", "db.events", "--json", *events).json()["tags"]
    assert {k: v["version"] for k, v in tags.items()} == {"first": 1, "latest": 2}
    assert cli("table", "tags", "create", "db.events", "first", *events).rc == 4
    assert cli("table", "tags", "delete", "db.events", "first", *events).rc == 0
    assert cli("table", "tags", "delete", "db.events", "first", *events).rc == EXIT_NOT_FOUND
    assert cli("table", "restore", "db.events", "1", *events).rc == 0
    d = cli("table", "describe", "db.events", "--json", *events).json()
    assert d["version"] == 3 and len(cli("table", "head", "db.events", "--json", *events).json()) == 3
    assert cli("table", "restore", "db.events", "99", *events).rc == EXIT_NOT_FOUND


def test_drop_asks_on_a_terminal(cli, events, monkeypatch):
    monkeypatch.setattr(Output, "interactive", property(lambda self: True))
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    r = cli("table", "drop", "db.events", *events)
    assert r.rc == EXIT_ERROR and "declined" in r.err and "drop table db.events and its data?" in r.err
    assert cli("table", "exists", "db.events", *events).rc == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert cli("table", "drop", "db.events", *events).rc == 0
    assert cli("table", "exists", "db.events", *events).rc == EXIT_NOT_FOUND


def test_purge_is_passed_in_the_request_context(cli):
    RecordingNamespace.dropped.clear()
    conn = ["--impl", "tests.cli.broken:RecordingNamespace"]
    # each command connects afresh: a memory namespace is empty, so the drop answers not found
    assert cli("table", "drop", "db.t", "--purge", "--yes", *conn).rc in (EXIT_NOT_FOUND,)
    assert cli("table", "drop", "db.t", "--yes", *conn).rc == EXIT_NOT_FOUND
    purge, plain = RecordingNamespace.dropped
    assert purge.context == {"purge": "true"} and not plain.context


def test_config_list_and_show_mask_secrets(cli, tmp_path, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[namespaces.prod]\nimpl = "rest"\nuri = "https://ann:hunter2-secret@catalog.example:2333"\n'
        'auth_token = "tok-abcdef"\n\n'
        '[namespaces.lake]\nimpl = "dir"\nroot = "s3://bucket/lake"\n'
        '"storage.aws_secret_access_key" = "AKIA-very-secret"\n"storage.region" = "eu-west-1"\n'
    )
    monkeypatch.setenv("LANCE_NS_CONFIG", str(cfg))
    monkeypatch.setenv("LANCE_NS__ENVONLY__IMPL", "memory")
    listed = cli("config", "list", "--json")
    assert listed.rc == 0
    rows = {r["name"]: r for r in listed.json()["namespaces"]}
    assert set(rows) == {"prod", "lake", "envonly"}
    assert rows["lake"]["properties"]["storage.region"] == "eu-west-1"
    assert rows["lake"]["properties"]["storage.aws_secret_access_key"] == MASK
    assert rows["prod"]["properties"]["uri"] == f"https://ann:{MASK}@catalog.example:2333"
    shown = cli("config", "show", "--config", "prod")
    human = cli("config", "list")
    for r in (listed, shown, human):
        for secret in ("hunter2-secret", "tok-abcdef", "AKIA-very-secret"):
            assert secret not in r.out + r.err
    assert "catalog.example" in shown.out and "named configuration 'prod'" in shown.out
    flags = cli("config", "show", "--impl", "dir", "--prop", "root=/x", "--prop", "storage.session_token=zzzzzz", "--json")
    assert flags.json() == {"source": "--impl/--prop", "impl": "dir",
                            "properties": {"root": "/x", "storage.session_token": MASK}}


def test_secrets_never_in_error_messages(cli):
    r = cli("namespace", "list", "--impl", "tests.cli.broken:LeakyNamespace",
            "--prop", "password=pa55word-xyz", "--prop", "uri=http://bob:pw-in-uri@host:1", "--json")
    assert r.rc == EXIT_UNAVAILABLE
    assert "pa55word-xyz" not in r.out + r.err and "pw-in-uri" not in r.out + r.err
    assert MASK in r.err and json.loads(r.out)["code"] == 17
    assert len(r.err.splitlines()) == 1


def test_completion(cli, monkeypatch):
    script = cli("completion", "bash")
    assert script.rc == 0 and "_LANCE_NS_COMPLETE" in script.out
    from lance_ns.cli import main

    monkeypatch.setenv("_LANCE_NS_COMPLETE", "bash_complete")
    monkeypatch.setenv("COMP_WORDS", "lance-ns table de")
    monkeypatch.setenv("COMP_CWORD", "2")
    with pytest.raises(SystemExit) as done:
        main(["table", "de"], stdout=(out := _binary_capable()))
    assert done.value.code == 0
    assert set(re.findall(r"plain,(\S+)", _text(out))) == {"declare", "deregister", "describe"}
    monkeypatch.setenv("COMP_WORDS", "lance-ns namespace create db --mode ex")
    monkeypatch.setenv("COMP_CWORD", "5")
    with pytest.raises(SystemExit):
        main([], stdout=(out := _binary_capable()))
    assert re.findall(r"plain,(\S+)", _text(out)) == ["exist_ok"]


def _binary_capable():
    """A captured stdout with a binary buffer: click writes completions as bytes."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8")


def _text(stream) -> str:
    stream.flush()
    return stream.buffer.getvalue().decode()


def test_check_never_prints_a_password_in_the_uri(cli):
    uri = "http://ann:pw-in-check-uri@127.0.0.1:9"  # nothing listens: every check fails, quoting the target
    for argv in (["check", "--uri", uri, "--only", "scenario"], ["check", "--uri", uri, "--json"]):
        r = cli(*argv)
        assert r.rc == 1 and "pw-in-check-uri" not in r.out + r.err
        assert f"ann:{MASK}@127.0.0.1:9" in r.out


def test_describe_masks_secret_storage_options(cli, events):
    conn = [*events, "--prop", "storage.aws_secret_access_key=XYZ-secret-99", "--prop", "storage.region=eu-west-1"]
    as_json = cli("table", "describe", "db.events", "--json", *conn)
    assert as_json.json()["storage_options"] == {"aws_secret_access_key": MASK, "region": "eu-west-1"}
    human = cli("table", "describe", "db.events", *conn)
    assert "XYZ-secret-99" not in human.out and re.search(r"storage aws_secret_access_key\s+│ \*\*\*(\s|$)", human.out)


def test_table_commands_through_our_rest_server(cli, events, root, tmp_path):
    """The new commands use namespace operations only, so they work through a REST server."""
    from lance_ns.server import run_server_in_thread

    src = tmp_path / "o.csv"
    src.write_text("order_id,amount\n1,1.5\n")
    with run_server_in_thread(lance_ns.connect("dir", {"root": str(root)}), log_requests=False) as server:
        rest = ["--impl", "rest", "--prop", f"uri={server.url}"]
        assert [r["id"] for r in cli("table", "head", "db.events", "2", "--json", *rest).json()] == [1, 2]
        assert "└── who: struct" in cli("table", "schema", "db.events", *rest).out
        assert re.search(r"│ rows\s+│ 4\s", cli("table", "describe", "db.events", *rest).out)
        assert cli("table", "create", "db.orders", "--from", src, *rest).rc == 0
        assert cli("table", "tags", "create", "db.events", "t1", "--version", "1", *rest).rc == 0
        assert cli("table", "restore", "db.events", "1", *rest).rc == 0
        assert cli("table", "drop", "db.orders", "--yes", *rest).rc == 0
    assert cli("table", "list", "db", "--json", *events).json()["tables"] == ["events"]
    assert cli("table", "describe", "db.events", "--json", *events).json()["version"] == 3
