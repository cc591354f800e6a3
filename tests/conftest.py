"""Fixtures shared across test folders."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def lance_ns_wheel(tmp_path_factory):
    """The package as a wheel, built once for every install test of the session."""
    from tests.packaging.install import build_wheel

    return build_wheel(tmp_path_factory.mktemp("wheel"))


#: tests that start the same kind of server run on one pytest-xdist worker, so that each
#: server starts once per run: by test folder, and by the server a conformance backend runs on
_SERVER_GROUPS = {"tests/hive/": "hive", "tests/iceberg/": "iceberg", "tests/spark/": "spark",
                  "tests/unity/": "unity",
                  # one lance-spark job (its own JVM) serves the whole module: run it once, on one worker
                  "tests/interop/test_lance_spark.py": "lance-spark"}
_BACKEND_GROUPS = {"hive2": "hive", "hive3": "hive", "hive3-hms3": "hive", "iceberg": "iceberg",
                   "iceberg-ref": "iceberg", "unity-oss": "unity", "unity-oss-0.4": "unity"}


def server_group(nodeid: str) -> str | None:
    """The server group of a test (None: any worker)."""
    path = nodeid.replace("\\", "/")
    if path.startswith("tests/conformance/") and "[" in path:
        param = path.split("[", 1)[1]
        backend = max((b for b in _BACKEND_GROUPS if param == b + "]" or param.startswith(b + "-")),
                      key=len, default=None)
        if backend:
            return _BACKEND_GROUPS[backend]
    return next((g for prefix, g in _SERVER_GROUPS.items() if path.startswith(prefix)), None)


def scheduling_group(nodeid: str) -> str | None:
    """The tests that must share a worker: a server group, and a backend's scenario checks
    (the scenario runs once on every worker that judges one of its checks: on one worker,
    once; the parameter is "<backend>-<check>")."""
    group = server_group(nodeid)
    if group is None and nodeid.startswith("tests/conformance/test_scenario.py") and "[" in nodeid:
        check = nodeid.split("[", 1)[1].rstrip("]")
        group = "scenario:" + check[:check.rfind("-", 0, check.find("."))]
    return group


def pytest_xdist_make_scheduler(config, log):
    """``-n N``: tests of one server group go to one worker, the rest anywhere (xdist's own
    ``xdist_group`` marks are read too late for pytest 9 to move a test, so the grouping is
    done here, at the scheduler's extension point)."""
    from xdist.scheduler import LoadScopeScheduling

    class ByServer(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scheduling_group(nodeid) or nodeid

    return ByServer(config, log)


#: ``--fast`` (make test-fast): the conformance suite over the backends that run in this
#: process (a catalog in memory, a local directory, the Unity double, our REST client and
#: server), and no test of a server group (Hive Metastore, Iceberg REST, Spark, Unity OSS)
_FAST_BACKENDS = frozenset({"memory", "dir-local", "unity", "rest-ours"})


def pytest_addoption(parser):
    parser.addoption("--fast", action="store_true",
                     help="the quick local loop: no JVM, Spark or Hive/Iceberg/Unity server, and the "
                          f"conformance suite over {', '.join(sorted(_FAST_BACKENDS))} only (make test is the gate)")


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--fast"):
        return
    kept, dropped = [], []
    for item in items:
        backend = getattr(getattr(item, "callspec", None), "params", {}).get("backend")
        local = getattr(backend, "name", None) in _FAST_BACKENDS if backend is not None else True
        (kept if local and server_group(item.nodeid) is None else dropped).append(item)
    config.hook.pytest_deselected(items=dropped)
    items[:] = kept
