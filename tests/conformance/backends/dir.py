"""The directory namespace on local disk and on S3 (a real SeaweedFS server).

Every ``connect()`` makes a new client over the same root, so the suite also
checks that separate clients see each other's changes through the
``__manifest`` table.

``dir-s3`` runs on SeaweedFS's S3 (tests/services/seaweedfs.py), a Go server in a
process of its own that decides conditional PUTs (``If-None-Match``/``If-Match``)
atomically, as S3 does.  It replaced moto here: moto serves S3 from a thread of the
test process, where every racing client's request waited on the same interpreter,
and the dir-s3 conformance took ~210 s against ~60 s (``-n 2``, same machine).
moto still serves the S3 tests of tests/dir/ and Glue's storage.
"""

from contextlib import contextmanager

import lance_ns
from tests.services.seaweedfs import seaweedfs_server

from . import Backend, Ctx, declared_caps, facts

#: what this environment offers; "cascade" the class declares
ENVIRONMENT = ("nested", "data", "detail", "ns_properties", "table_properties", "register")


@contextmanager
def _local(tmp):
    root = str(tmp / "root")
    connect = lambda: lance_ns.connect("dir", {"root": root})  # noqa: E731
    yield Ctx(connect=connect, caps=declared_caps(connect(), *ENVIRONMENT), scratch=f"{root}/scratch",
              spawn=("dir", {"root": root}))


@contextmanager
def _s3(tmp):
    with seaweedfs_server() as s3:
        # a plain bucket of its own (the shared server's table bucket is Iceberg's)
        bucket = s3.create_bucket("lance-dir-conformance")
        opts = s3.storage_options()
        root = f"s3://{bucket}/root"
        props = {"root": root, **{f"storage.{k}": v for k, v in opts.items()}}
        yield Ctx(
            connect=lambda: lance_ns.connect("dir", props),
            caps=declared_caps(lance_ns.connect("dir", props), *ENVIRONMENT),
            scratch=f"{root}/scratch",
            storage_options=opts,
            spawn=("dir", props),
            # ~4 s a round of 24 appends on SeaweedFS (dir-local: ~0.4 s): dir's commit path runs the
            # suite's 20 rounds on dir-local and through rest-ours; the object store's 8 here and
            # 8 more with two servers over one SeaweedFS root (dir-s3-servers)
            append_rounds=8,
        )


#: what a directory namespace object shows (the suite generates its tests from these)
FACTS = facts("at_root cascade data detail directory managed nested ns_properties ours register spawn table_properties")

BACKENDS = [Backend("dir-local", _local, FACTS), Backend("dir-s3", _s3, FACTS)]
