"""The ``lance`` source on object storage: a directory namespace on S3 (moto),
with the storage options given once, as namespace properties."""

from __future__ import annotations

import boto3
import pytest

from tests.servers.moto import client_kwargs, moto_server, s3_storage_options

from .test_datasource import _failing, events, read, rows, wait_for_tasks

BUCKET = "spark-lake"


@pytest.fixture(scope="module")
def s3_lake():
    with moto_server() as endpoint:
        s3 = boto3.client("s3", **client_kwargs(endpoint))
        s3.create_bucket(Bucket=BUCKET)
        options = {"impl": "dir", "dir.root": f"s3://{BUCKET}/lake"}
        options.update({f"dir.storage.{k}": v for k, v in s3_storage_options(endpoint).items()})
        yield options, s3


def _keys(s3, prefix):
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", []))


def test_write_read_and_failed_job_on_s3(spark, s3_lake):
    options, s3 = s3_lake
    df = events(spark, 500)
    df.write.format("lance").mode("overwrite").options(**options).save("events")
    df.write.format("lance").mode("append").options(**options).save("events")
    got = read(spark, options, "events")
    assert got.count() == 1000
    assert rows(got.filter("id < 3")) == rows(df.filter("id < 3").unionAll(df.filter("id < 3")))

    data_before = [k for k in _keys(s3, "lake/") if "/data/" in k]
    with pytest.raises(Exception, match="boom at 300"):
        _failing(spark).write.format("lance").mode("append").options(**options).save("events")
    wait_for_tasks(spark)
    assert [k for k in _keys(s3, "lake/") if "/data/" in k] == data_before
    assert not [k for k in _keys(s3, "lake/") if k.endswith(".json") and "_lance_ns_spark" in k]
    assert read(spark, options, "events").count() == 1000
