"""Several ``lance-ns serve`` processes over one object-store root: the races across servers.

Users who outgrow one machine run several servers over one S3 root.  Here two real
``lance-ns serve`` processes (each its own interpreter, its own in-memory view of the
root's ``__manifest``) serve one fresh root, and every ``connect()`` of the suite takes
the next server in turn, so the racing clients of test_concurrency.py and
test_managed.py race through different servers and meet only in storage:

* ``dir-s3-servers``: SeaweedFS's S3 (a Go server deciding conditional PUTs atomically);
* ``dir-moto-servers``: moto's S3 (tests/services/moto.py makes its conditional PUTs atomic,
  as S3's are).

They join only the race modules and test_servers.py (a declare through one server
described through the other on the next request, racing first writes on fresh roots).
"""

import itertools
import threading
import uuid
from contextlib import ExitStack, contextmanager

import lance_ns
from tests.server.conftest import lance_ns_serve
from tests.services.moto import moto_bucket
from tests.services.seaweedfs import seaweedfs_server

from . import Backend, Ctx, declared_caps, facts
from .dir import ENVIRONMENT

SERVERS = 2
#: the test modules these backends join (the races, and the checks made for several servers)
MODULES = frozenset({"test_concurrency", "test_managed", "test_servers"})


def serve_args(root: str, storage: dict[str, str]) -> list[str]:
    """``lance-ns serve`` arguments for the directory namespace on ``root``."""
    args = ["--impl", "dir", "--prop", f"root={root}"]
    for k, v in storage.items():
        args += ["--prop", f"storage.{k}={v}"]
    return args


@contextmanager
def servers_over(root: str, storage: dict[str, str], count: int = SERVERS, tmp=None):
    """``count`` servers over one root, started together: their URLs."""
    with ExitStack() as stack:
        started: list = [None] * count
        errors: list = []

        def start(i):
            try:
                log = (tmp / f"server{i}-{uuid.uuid4().hex[:6]}.log") if tmp is not None else None
                started[i] = stack.enter_context(lance_ns_serve(serve_args(root, storage), log_file=log))
            except Exception as e:  # noqa: BLE001 - raised below, with the others stopped
                errors.append(e)

        threads = [threading.Thread(target=start, args=(i,)) for i in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        yield [s.url for s in started]


def _ctx(urls: list[str], root: str, storage: dict[str, str], rounds: int) -> Ctx:
    # the servers never hand out their own credentials: each client brings the test's
    own = {f"storage.{k}": v for k, v in storage.items()}
    clients = [lance_ns.connect("rest", {"uri": url, **own}) for url in urls]
    turn = itertools.cycle(range(len(clients)))
    lock = threading.Lock()

    def connect():
        with lock:
            return clients[next(turn)]

    served = lance_ns.connect("dir", {"root": root, **{f"storage.{k}": v for k, v in storage.items()}})
    return Ctx(connect=connect, caps=declared_caps(served, *ENVIRONMENT), scratch=f"{root}-scratch",
               storage_options=storage, spawn=("rest", {"uri": urls[0], **own}), append_rounds=rounds)


@contextmanager
def _seaweed(tmp):
    with seaweedfs_server() as s3:
        root, storage = f"s3://{s3.create_bucket('lance-servers')}/root", s3.storage_options()
        with servers_over(root, storage, tmp=tmp) as urls:
            # a round of 24 appends costs ~3.5 s here (dir-local: ~0.5 s; dir-s3 and rest-ours run
            # the suite's 20 rounds of the same commit path through storage and through one server)
            yield _ctx(urls, root, storage, rounds=8)


@contextmanager
def _moto(tmp):
    bucket = f"lance-servers-{uuid.uuid4().hex[:8]}"
    with moto_bucket(bucket) as (_, storage):
        root = f"s3://{bucket}/root"
        with servers_over(root, storage, tmp=tmp) as urls:
            # moto answers from a thread of the test process, under its GIL: ~19 s a round
            yield _ctx(urls, root, storage, rounds=1)


FACTS = facts("at_root cascade data detail managed nested ns_properties ours register rest spawn table_properties")

BACKENDS = [Backend("dir-s3-servers", _seaweed, FACTS, modules=MODULES, servers=SERVERS),
            Backend("dir-moto-servers", _moto, FACTS, modules=MODULES, servers=SERVERS)]
