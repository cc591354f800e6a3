"""The directory namespace on local disk and on S3 (a real moto server).

Every ``connect()`` makes a new client over the same root, so the suite also
checks that separate clients see each other's changes through the
``__manifest`` table.
"""

from contextlib import contextmanager

import boto3

import lance_ns
from tests.servers.moto import client_kwargs, moto_server, s3_storage_options

from . import Backend, Ctx, declared_caps

#: what this environment offers; "cascade" the class declares
ENVIRONMENT = ("nested", "data", "detail", "ns_properties", "table_properties", "register")
BUCKET = "lance-dir-conformance"


@contextmanager
def _local(tmp):
    root = str(tmp / "root")
    connect = lambda: lance_ns.connect("dir", {"root": root})  # noqa: E731
    yield Ctx(connect=connect, caps=declared_caps(connect(), *ENVIRONMENT), scratch=f"{root}/scratch")


@contextmanager
def _s3(tmp):
    with moto_server() as endpoint:
        boto3.client("s3", **client_kwargs(endpoint)).create_bucket(Bucket=BUCKET)
        opts = s3_storage_options(endpoint)
        root = f"s3://{BUCKET}/root"
        props = {"root": root, **{f"storage.{k}": v for k, v in opts.items()}}
        yield Ctx(
            connect=lambda: lance_ns.connect("dir", props),
            caps=declared_caps(lance_ns.connect("dir", props), *ENVIRONMENT),
            scratch=f"{root}/scratch",
            storage_options=opts,
            # the manifest's races are dir-local's (two rounds); here they run over moto's S3,
            # written in Python and ~20x slower: one round proves its conditional PUTs
            race_rounds=1,
        )


BACKENDS = [Backend("dir-local", _local), Backend("dir-s3", _s3)]
