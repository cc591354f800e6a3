"""The ``lance`` source on object storage: a directory namespace on S3 (moto),
with the storage options given once, as namespace properties."""

from __future__ import annotations

import pytest

from lance_ns.spark.jobfiles import ABORTED, JobFiles
from tests.services.moto import moto_bucket

from .test_datasource import _failing, _written, events, read, rows, wait_for_tasks

BUCKET = "spark-lake"


@pytest.fixture(scope="module")
def s3():
    """(boto3 S3 client, pylance storage options) for BUCKET."""
    with moto_bucket(BUCKET) as bucket:
        yield bucket


def _keys(s3, prefix):
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", []))


def test_write_read_and_failed_job_on_s3(spark, s3):
    client, storage = s3
    options = {"impl": "dir", "dir.root": f"s3://{BUCKET}/lake"}
    options.update({f"dir.storage.{k}": v for k, v in storage.items()})
    df = events(spark, 500)
    df.write.format("lance").mode("overwrite").options(**options).save("events")
    df.write.format("lance").mode("append").options(**options).save("events")
    got = read(spark, options, "events")
    assert got.count() == 1000
    assert rows(got.filter("id < 3")) == rows(df.filter("id < 3").unionAll(df.filter("id < 3")))

    data_before = [k for k in _keys(client, "lake/") if "/data/" in k]
    with pytest.raises(Exception, match="boom at 300"):
        _failing(spark).write.format("lance").mode("append").options(**options).save("events")
    wait_for_tasks(spark)
    assert [k for k in _keys(client, "lake/") if "/data/" in k] == data_before
    assert not [k for k in _keys(client, "lake/") if k.endswith(".json") and "_lance_ns_spark" in k]
    assert read(spark, options, "events").count() == 1000


def test_job_files_on_object_storage(s3):
    # the job-file protocol on S3: records, marker and deletes go through
    # lance's object store, with the table's storage options
    client, storage = s3
    uri = f"s3://{BUCKET}/jobs/t.lance"

    job = JobFiles(uri, storage)
    assert job.record(_written(uri, 4, storage))
    job.abort([])
    assert not job.record(_written(uri, 2, storage))
    assert [k for k in _keys(client, "jobs/") if "/data/" in k or k.endswith(".json")] == []
    kept = JobFiles(uri, storage)
    paths = _written(uri, 2, storage)
    assert kept.record(paths)
    kept.finish()
    kept_keys = [k for k in _keys(client, "jobs/") if not k.endswith("/" + ABORTED)]
    assert kept_keys == [f"jobs/t.lance/data/{p}" for p in paths]
