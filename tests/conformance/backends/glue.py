"""AWS Glue on a real moto server (Glue + S3 + STS on 127.0.0.1).

Table data lives in moto's S3 (``root=s3://<bucket>/warehouse``), written and
read by pylance with the storage options below.  moto has no Glue catalog
APIs, so the suite sees an account catalog of databases: one level of
namespaces (no "nested"); the multi-level catalog paths are covered in
tests/glue/ with botocore's Stubber.
"""

from contextlib import contextmanager

import boto3

import lance_ns
from tests.services.moto import ACCOUNT_ID, REGION, client_kwargs, moto_server, s3_storage_options

from . import Backend, Ctx, declared_caps, facts

BUCKET = "lance-glue-conformance"


@contextmanager
def _start(tmp, **extra: str):
    """(``extra``: more namespace properties, as ``credential_vendor.*``: the interop tests')"""
    with moto_server() as endpoint:
        boto3.client("s3", **client_kwargs(endpoint)).create_bucket(Bucket=BUCKET)
        opts = s3_storage_options(endpoint)
        props = {
            "endpoint": endpoint,
            "region": REGION,
            "catalog_id": ACCOUNT_ID,
            "access_key_id": "testing",
            "secret_access_key": "testing",
            "root": f"s3://{BUCKET}/warehouse",
            **{f"storage.{k}": v for k, v in opts.items()},
            **{k: v.format(endpoint=endpoint) for k, v in extra.items()},
        }
        ns = lance_ns.connect("glue", props)
        yield Ctx(
            connect=lambda: lance_ns.connect("glue", props),
            caps=declared_caps(ns, "data", "detail", "ns_properties", "table_properties", "register"),
            scratch=f"s3://{BUCKET}/scratch",
            storage_options=opts,
            spawn=("glue", props),
        )


RACE_LIMITS = {
    "test_racing_commits_of_one_version_have_one_winner": (
        "moto ignores UpdateTable's VersionId (every racing update succeeds); Glue's "
        "compare-and-swap path is tested in tests/glue/test_managed_cas.py with botocore's Stubber"
    ),
}

#: no "managed": moto ignores UpdateTable's VersionId, so the connection refuses managed tables there
BACKENDS = [Backend("glue", _start, facts("at_root catalog data detail ns_properties ours register spawn table_properties"),
                    race_limits=RACE_LIMITS)]
