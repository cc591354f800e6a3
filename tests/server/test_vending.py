"""Credential vending (issue 19.2) against moto's STS and S3 with IAM authorization on.

The moto server here is its own process (``tests.services.moto.iam_moto_server``):
after the setup (an IAM user for the namespace, the role it vends, a bucket) it
refuses any request not signed with credentials it issued and not allowed by the
caller's IAM policies.  So pylance succeeding with nothing but the vended options
proves the vended credentials are what it used, and that they are valid.

What moto does not enforce (checked in moto 5.2's ``moto/iam/access_control.py``):
an assumed role's *session policy* (only the role's own policies are evaluated)
and the credentials' expiry.  The session policy lance-ns sends is therefore
judged with moto's own IAM policy evaluator here, and the departure is a strict
xfail that turns into a pass the day moto enforces session policies.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import time

import lance
import lance.namespace
import pyarrow as pa
import pytest
from lance_namespace import DeclareTableRequest, DescribeTableRequest

import lance_ns
from lance_ns import vending
from lance_ns.conformance import PASS, Target, run_checks
from lance_ns.conformance.checks_vending import VENDING_CHECKS
from lance_ns.errors import InvalidInputError
from lance_ns.impls.dir import DirectoryNamespace
from lance_ns.server import run_server_in_thread
from lance_ns.datasets import table_to_ipc_stream
from tests.services.moto import iam_moto_server, no_ambient_aws_credentials

pytestmark = pytest.mark.slow

BUCKET = "vend-lake"
ROOT = f"s3://{BUCKET}/wh"
TOKENS = {"reader": "vend-reader-tok", "writer": "vend-writer-tok"}
AUTH_TOML = f"""
[[principal]]
name = "reader"
token = "{TOKENS['reader']}"
read = ["*"]

[[principal]]
name = "writer"
token = "{TOKENS['writer']}"
write = ["*"]
"""


@pytest.fixture(scope="module")
def aws():
    with iam_moto_server(BUCKET) as world:
        yield world


@pytest.fixture(autouse=True)
def no_ambient_credentials(monkeypatch, tmp_path):
    """pylance must find no credentials but the ones it is handed."""
    no_ambient_aws_credentials(monkeypatch, tmp_path)


def properties(aws, root: str, **vendor: str) -> dict[str, str]:
    return {"root": root, **{f"storage.{k}": v for k, v in aws.server_storage_options().items()},
             "credential_vendor.enabled": "true", "credential_vendor.aws_role_arn": aws.role_arn,
             "credential_vendor.aws_sts_endpoint": aws.endpoint, "credential_vendor.permission": "admin",
             **{f"credential_vendor.{k}": v for k, v in vendor.items()}}


def connect(aws, root: str, **vendor: str):
    return lance_ns.connect("dir", properties(aws, root, **vendor))


def rows(n: int, start: int = 0) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64())})


def test_pylance_reads_and_writes_with_only_the_vended_credentials(aws):
    ns = connect(aws, f"{ROOT}/rw", aws_duration_millis="600000")
    ns.create_namespace({"id": ["sales"]})
    started = int(time.time() * 1000)
    declared = ns.declare_table(DeclareTableRequest(id=["sales", "declared"]))
    opts = declared.storage_options
    assert {"aws_access_key_id", "aws_secret_access_key", "aws_session_token", "expires_at_millis"} <= set(opts)
    assert opts["aws_access_key_id"] != aws.server_key_id  # the namespace's own key is never handed out
    assert aws.server_secret not in opts.values()
    # temporary: expires within the configured duration
    assert started < int(opts["expires_at_millis"]) <= int(time.time() * 1000) + 600_000

    # pylance writes and reads through the namespace: its only credentials are the vended ones
    lance.write_dataset(rows(3), namespace_client=ns, table_id=["sales", "orders"], mode="create",
                        storage_options={"endpoint": aws.endpoint, "allow_http": "true"})
    lance.write_dataset(rows(2, 3), namespace_client=ns, table_id=["sales", "orders"], mode="append")
    ds = lance.dataset(namespace_client=ns, table_id=["sales", "orders"])
    assert sorted(ds.to_table()["id"].to_pylist()) == [0, 1, 2, 3, 4]

    # moto enforces IAM: the same read with credentials it never issued is refused
    forged = {"endpoint": aws.endpoint, "allow_http": "true", "region": aws.region,
              "aws_access_key_id": "AKIAFORGED0000000000", "aws_secret_access_key": "forged"}
    with pytest.raises(Exception):
        lance.dataset(ds.uri, storage_options=forged).count_rows()


def test_the_session_policy_is_the_tables_prefix_only():
    """moto's own IAM evaluator judges the policy lance-ns sends with AssumeRole."""
    from moto.iam.access_control import IAMPolicy, PermissionResult

    def allowed(policy: dict, action: str, resource: str, prefix: str | None = None) -> bool:
        conditions = {"s3:prefix": [prefix]} if prefix is not None else None
        result = IAMPolicy(json.dumps(policy)).is_action_permitted(action, resource, None, conditions)
        return result == PermissionResult.PERMITTED

    table = "s3://lake/wh/sales/orders.lance"
    read = vending.session_policy(table, vending.Permission.READ)
    admin = vending.session_policy(table + "/", vending.Permission.ADMIN)
    mine, other = "arn:aws:s3:::lake/wh/sales/orders.lance/data/f.lance", "arn:aws:s3:::lake/wh/sales/orders2.lance/x"
    assert allowed(read, "s3:GetObject", mine) and not allowed(read, "s3:GetObject", other)
    assert not allowed(read, "s3:PutObject", mine) and not allowed(read, "s3:DeleteObject", mine)
    assert allowed(admin, "s3:PutObject", mine) and allowed(admin, "s3:DeleteObject", mine)
    assert not allowed(admin, "s3:PutObject", other)
    write = vending.session_policy(table, vending.Permission.WRITE)
    assert allowed(write, "s3:PutObject", mine) and not allowed(write, "s3:DeleteObject", mine)
    # listing: the bucket, only below the table's own prefix.  moto's evaluator ignores
    # StringLike conditions, so the s3:prefix patterns are matched with IAM's wildcards here
    assert allowed(read, "s3:ListBucket", "arn:aws:s3:::lake") and not allowed(read, "s3:ListBucket", "arn:aws:s3:::other")
    (listing,) = [st for st in read["Statement"] if st["Action"] == "s3:ListBucket"]
    patterns = listing["Condition"]["StringLike"]["s3:prefix"]

    def may_list(prefix: str) -> bool:
        return any(fnmatch.fnmatchcase(prefix, p) for p in patterns)  # IAM: * any run, ? one character

    assert may_list("wh/sales/orders.lance/_versions/") and may_list("wh/sales/orders.lance")
    assert not may_list("wh/sales/") and not may_list("wh/sales/orders2.lance/") and not may_list("")


@pytest.mark.xfail(strict=True, reason="moto 5.2 evaluates only an assumed role's own policies, never the "
                   "session policy passed to AssumeRole: scoped credentials reach other prefixes there")
def test_moto_denies_another_tables_prefix(aws):
    ns = connect(aws, f"{ROOT}/scope", permission="read")
    ns.create_namespace({"id": ["a"]})
    ns.create_table({"id": ["a", "mine"]}, table_to_ipc_stream(rows(1)))
    other = ns.declare_table(DeclareTableRequest(id=["a", "other"], vend_credentials=False)).location
    vended = ns.describe_table(DescribeTableRequest(id=["a", "mine"])).storage_options
    with pytest.raises(OSError):
        lance.write_dataset(rows(1), other, storage_options=vended)


@pytest.mark.xfail(strict=True, reason="moto 5.2 ignores session policies: read-only vended credentials may write there")
def test_moto_denies_writes_with_read_only_credentials(aws):
    ns = connect(aws, f"{ROOT}/readonly", permission="read")
    ns.create_namespace({"id": ["a"]})
    ns.create_table({"id": ["a", "t"]}, table_to_ipc_stream(rows(1)))
    described = ns.describe_table(DescribeTableRequest(id=["a", "t"]))
    with pytest.raises(OSError):
        lance.write_dataset(rows(1), described.location, mode="append", storage_options=described.storage_options)


def test_read_principals_get_read_only_credentials_over_rest(aws, tmp_path, caplog):
    ns = connect(aws, f"{ROOT}/rest")
    ns.create_namespace({"id": ["s"]})
    (tmp_path / "auth.toml").write_text(AUTH_TOML)
    caplog.set_level(logging.INFO, logger="lance_ns.vending")
    with run_server_in_thread(ns, auth_file=str(tmp_path / "auth.toml"), log_requests=False) as server:
        def client(who):
            return lance.namespace.RestNamespace(uri=server.url, **{"header.Authorization": f"Bearer {TOKENS[who]}"})

        writer, reader = client("writer"), client("reader")
        lance.write_dataset(rows(4), namespace_client=writer, table_id=["s", "t"], mode="create",
                            storage_options={"endpoint": aws.endpoint, "allow_http": "true"})
        assert "vended admin credentials" in caplog.text
        caplog.clear()
        described = reader.describe_table(DescribeTableRequest(id=["s", "t"]))
        opts = described.storage_options
        assert opts["aws_access_key_id"] != aws.server_key_id and aws.server_secret not in opts.values()
        assert "vended read credentials" in caplog.text and "vended admin" not in caplog.text
        assert lance.dataset(namespace_client=reader, table_id=["s", "t"]).count_rows() == 4
        # no secret in the log, only the location, the permission and the expiry
        assert opts["aws_secret_access_key"] not in caplog.text and opts["aws_session_token"] not in caplog.text
        refused = writer.describe_table(DescribeTableRequest(id=["s", "t"], vend_credentials=False))
        assert not vending.is_vended(refused.storage_options)


def test_pylance_refreshes_expiring_credentials(aws):
    """A 1 s ``aws_duration_millis``: ``expires_at_millis`` is 1 s ahead (STS's own sessions last
    at least 15 minutes), so pylance asks the namespace again before using them later."""
    calls = []

    class Counting(DirectoryNamespace):
        def describe_table(self, request):
            calls.append(request.vend_credentials)
            return super().describe_table(request)

    ns = Counting(**properties(aws, f"{ROOT}/refresh", aws_duration_millis="1000", cache_enabled="false"))
    ns.create_namespace({"id": ["r"]})
    lance.write_dataset(rows(2), namespace_client=ns, table_id=["r", "t"], mode="create",
                        storage_options={"endpoint": aws.endpoint, "allow_http": "true"})
    ds = lance.dataset(namespace_client=ns, table_id=["r", "t"])
    opened = len(calls)
    time.sleep(1.2)  # past expires_at_millis
    assert ds.to_table().num_rows == 2
    # pylance's storage-options provider asks again, explicitly for credentials
    assert True in calls[opened:], f"pylance did not ask the namespace for new credentials: {calls}"


def test_vending_conformance_checks(aws, tmp_path):
    """The vend_credentials checks of the shared scenario, judged in-process and over REST."""
    ns = connect(aws, f"{ROOT}/conf")
    target = Target.backend(ns)
    assert "vending" in target.caps
    results = run_checks(target, VENDING_CHECKS)
    assert [r for r in results if r.status != PASS] == []
    with run_server_in_thread(ns, auth_token="conf-token", log_requests=False) as server:
        remote = Target.rest_server(server.url, "conf-token")
        remote.caps = frozenset({"vending"})  # a REST server's configuration is not visible: declared here
        try:
            results = run_checks(remote, VENDING_CHECKS)
        finally:
            remote.close()
    assert [r for r in results if r.status != PASS] == []


def test_configuration_errors():
    with pytest.raises(InvalidInputError, match="aws_role_arn"):
        vending.VendorConfig.from_properties({"credential_vendor.enabled": "true"})
    with pytest.raises(InvalidInputError, match="read, write or admin"):
        vending.VendorConfig.from_properties({"credential_vendor.enabled": "true",
                                              "credential_vendor.aws_role_arn": "arn:aws:iam::1:role/r",
                                              "credential_vendor.permission": "owner"})
    assert vending.VendorConfig.from_properties({"credential_vendor.aws_role_arn": "x"}) is None


def test_a_reader_gets_read_only_credentials_from_a_vending_mount_beside_one_that_vends_none(aws, tmp_path, caplog):
    """Mounts vend from each mount's own backend; a principal that may only read is capped to
    read credentials whatever the other mounts do (here a local directory, vending nothing)."""
    from lance_ns.impls.mounts import MountsNamespace

    vending_mount = connect(aws, f"{ROOT}/mounted")
    vending_mount.create_namespace({"id": ["s"]})
    vending_mount.declare_table({"id": ["s", "t"]})
    scratch = lance_ns.connect("dir", {"root": str(tmp_path / "scratch")})
    mounts = MountsNamespace.of({"aws": vending_mount, "scratch": scratch})
    (tmp_path / "auth.toml").write_text(AUTH_TOML)
    caplog.set_level(logging.INFO, logger="lance_ns.vending")
    with run_server_in_thread(mounts, auth_file=str(tmp_path / "auth.toml"), log_requests=False, ui=False) as server:
        reader = lance.namespace.RestNamespace(uri=server.url, **{"header.Authorization": f"Bearer {TOKENS['reader']}"})
        described = reader.describe_table(DescribeTableRequest(id=["aws", "s", "t"]))
        assert vending.is_vended(described.storage_options)
        assert "vended read credentials" in caplog.text and "vended admin" not in caplog.text
    scratch.close()
