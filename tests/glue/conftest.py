"""Fixtures of the Glue tests: the shared moto server, props for it, unique names."""

from __future__ import annotations

import uuid

import boto3
import pytest

from tests.services.moto import ACCOUNT_ID, REGION, client_kwargs, moto_server, s3_storage_options

BUCKET = "lance-glue-tests"


@pytest.fixture(scope="session")
def endpoint():
    with moto_server() as url:
        boto3.client("s3", **client_kwargs(url)).create_bucket(Bucket=BUCKET)
        yield url


@pytest.fixture
def glue(endpoint):
    """A plain boto3 Glue client: the 'other tool' next to our namespace."""
    return boto3.client("glue", **client_kwargs(endpoint))


@pytest.fixture
def props(endpoint):
    return {
        "endpoint": endpoint,
        "region": REGION,
        "catalog_id": ACCOUNT_ID,
        "access_key_id": "testing",
        "secret_access_key": "testing",
        "root": f"s3://{BUCKET}/warehouse",
        **{f"storage.{k}": v for k, v in s3_storage_options(endpoint).items()},
    }


@pytest.fixture
def db_name():
    return f"db_{uuid.uuid4().hex[:10]}"


def code_of(fn, *args):
    from lance_namespace import LanceNamespaceError

    with pytest.raises(LanceNamespaceError) as info:
        fn(*args)
    return int(info.value.code)
