"""Fixtures shared across test folders, and what this machine cannot run (asked once per run)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest


@pytest.fixture(scope="session")
def lance_ns_wheel(tmp_path_factory):
    """The package as a wheel, built once for every install test of the session."""
    from tests.packaging.install import build_wheel

    return build_wheel(tmp_path_factory.mktemp("wheel"))


#: tests that start the same kind of server run on one pytest-xdist worker, so that each
#: server starts once per run: by test folder, and by the server a conformance backend runs on
_SERVER_GROUPS = {"tests/hive/": "hive", "tests/iceberg/": "iceberg",
                  # Spark tests that start Spark processes of their own, never the shared session:
                  # a group each, free to run beside the spark group (the run's longest)
                  "tests/spark/test_killed_write.py": "spark-killed",
                  "tests/spark/test_supported_range.py": "spark-range",
                  "tests/spark/": "spark",
                  "tests/unity/": "unity",
                  # sync between real servers: on the worker that has the server already
                  "tests/sync/test_sync.py::test_a_hive_metastore_into_unity": "hive",
                  "tests/sync/test_sync.py::test_the_iceberg_rest_reference_into_dir": "iceberg",
                  # one lance-spark job (its own JVM) serves the whole module: run it once, on one worker
                  "tests/interop/test_lance_spark.py": "lance-spark"}
_BACKEND_GROUPS = {"hive2": "hive", "hive3": "hive", "hive3-hms3": "hive", "iceberg": "iceberg",
                   "iceberg-ref": "iceberg", "unity-oss": "unity", "unity-oss-0.4": "unity",
                   "mounted-hive3-hms3": "hive"}


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
_FAST_BACKENDS = frozenset({"memory", "dir-local", "unity", "rest-ours", "mounts", "mounts-served"})


def pytest_addoption(parser):
    parser.addoption("--fast", action="store_true",
                     help="the quick local loop: no JVM, Spark or Hive/Iceberg/Unity server, and the "
                          f"conformance suite over {', '.join(sorted(_FAST_BACKENDS))} only (make test is the gate)")


def _runs_here(config, item) -> bool:
    """Whether ``item`` can run on this machine and in this mode (--fast: in-process only)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    if any(unavailable_server(config, value) for value in params.values()):
        return False  # reported once, in the summary (pytest_terminal_summary)
    if not config.getoption("--fast"):
        return True
    backend = params.get("backend")
    local = getattr(backend, "name", None) in _FAST_BACKENDS if backend is not None else True
    return local and server_group(item.nodeid) is None


def pytest_collection_modifyitems(config, items):
    kept, dropped = [], []
    for item in items:
        (kept if _runs_here(config, item) else dropped).append(item)
    config.hook.pytest_deselected(items=dropped)
    items[:] = kept


#: the real servers a test may be given whose jars Maven may refuse (the registry here serves no
#: ``unitycatalog-server``), by the parameter that names them: conformance backends and
#: tests/unity's server kinds -> the Unity Catalog OSS version
_MAVEN_SERVERS = {"unity-oss": "0.6.0", "unity-oss-0.4": "0.4.1", "oss-0.6.0": "0.6.0", "oss-0.4.1": "0.4.1"}
_UNAVAILABLE = pytest.StashKey[dict]()


def _refused_versions() -> dict[str, str]:
    """Unity Catalog OSS version -> Maven's refusal, for the versions Maven will not give."""
    from tests.services.unity_oss import MavenRefused, resolve_classpath

    def ask(version):
        try:
            resolve_classpath(version)
        except MavenRefused as e:
            return version, str(e)
        except Exception:  # noqa: BLE001 - no mvn, or another failure: the tests run and say so themselves
            return version, None
        return version, None

    with ThreadPoolExecutor(4) as pool:
        answers = pool.map(ask, sorted(set(_MAVEN_SERVERS.values())))
    return {version: reason for version, reason in answers if reason}


def _asks_for_servers(config) -> bool:
    """Whether the run collects a test that takes one of the _MAVEN_SERVERS (an argument at or
    above tests/conformance or tests/unity), outside --fast (which runs none)."""
    if config.getoption("--fast", False):
        return False
    wanted = {os.path.realpath(os.path.join(str(config.rootpath), "tests", d)) for d in ("conformance", "unity")}
    for arg in config.args or [str(config.rootpath)]:
        path = os.path.realpath(os.path.join(str(config.invocation_params.dir), arg.split("::")[0]))
        if any(w == path or w.startswith(path + os.sep) or path.startswith(w + os.sep) for w in wanted):
            return True
    return False


def pytest_configure(config):
    worker = getattr(config, "workerinput", None)
    if worker is not None:  # an xdist worker: its controller asked
        config.stash[_UNAVAILABLE] = worker.get("lance_ns_unavailable", {})
        return
    config.stash[_UNAVAILABLE] = _refused_versions() if _asks_for_servers(config) else {}
    named = {b.strip() for b in os.environ.get("LANCE_NS_BACKENDS", "").split(",")}
    refused = sorted(b for b in named if _MAVEN_SERVERS.get(b) in config.stash[_UNAVAILABLE])
    if refused:  # told to run it: not running it would look like a pass
        raise pytest.UsageError(f"LANCE_NS_BACKENDS names {refused}, which cannot run here: "
                                + "; ".join(sorted(set(config.stash[_UNAVAILABLE].values()))))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist: each worker is told what its controller found unavailable (Maven is asked once)."""
    node.workerinput["lance_ns_unavailable"] = node.config.stash[_UNAVAILABLE]


def unavailable_server(config, value) -> str | None:
    """Why the server a parameter value names (a conformance Backend, a tests/unity kind) cannot
    run here (None: it can, or it names none)."""
    version = _MAVEN_SERVERS.get(value if isinstance(value, str) else getattr(value, "name", None))
    return config.stash.get(_UNAVAILABLE, {}).get(version) if version else None


def pytest_terminal_summary(terminalreporter, config):
    for version, reason in sorted(config.stash.get(_UNAVAILABLE, {}).items()):
        names = sorted(n for n, v in _MAVEN_SERVERS.items() if v == version)
        terminalreporter.write_line(f"NOT RUN HERE (deselected): the tests of {', '.join(names)}: {reason}")
