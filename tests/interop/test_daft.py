"""Daft through daft-lance (PyPI ``daft`` and ``daft-lance``), a client nobody here wrote,
creating, appending to and reading lance-ns tables -- by backend name
(``namespace_impl="lance_ns.dir"``: daft-lance connects through lance_namespace's
registry, which resolves the dotted path to our class) and over REST at ``lance-ns serve``
(``namespace_impl="rest"``, pylance's own client) -- and reading a table lance-ns wrote,
with exact counts and sums, then read back by lance-ns and pylance here.

Namespace addressing lives in daft-lance only: ``daft_lance.read_lance`` and
``daft_lance.write_lance`` take ``table_id=``, ``namespace_impl=`` and
``namespace_properties=``; Daft's own ``daft.read_lance(uri)`` and
``DataFrame.write_lance(uri)`` take a uri only (in Daft 0.7 the first rejects ``table_id``
with a TypeError, the second a ``uri=None`` with an APITypeError), so the job calls
daft-lance.  ``mode="create"`` declares the table in the namespace (``declare_table``),
``mode="append"`` describes it; each write is one Lance commit, and the job reports the
version each write committed.

Daft 0.7 wants pyarrow < 26 and the dev environment has pyarrow 26, so Daft runs in an
environment of its own, made with ``uv`` from this package's wheel (tests/packaging/install.py).
"""

from __future__ import annotations

import textwrap

import pytest
from lance.namespace import RestNamespace

import lance_ns
from . import engines

pytestmark = pytest.mark.slow

#: daft-lance 0.6 and the Daft release it was tested with (Daft hands its Lance I/O to daft-lance)
DAFT_REQUIREMENTS = ("daft-lance>=0.6,<0.7", "daft>=0.7.26,<0.8")

JOB = textwrap.dedent('''
    import json, os, sys
    import daft, daft_lance
    from daft import col
    from daft_lance.namespace import get_or_create_namespace
    daft.set_runner_native(num_threads=2)

    def summary(df, *columns):
        rows = df.to_pydict()  # one execution, summed here
        return [len(rows[columns[0]])] + [sum(rows[c]) for c in columns]

    def committed(write):  # a write is lazy: this runs it, and answers the version it committed
        return write.to_pydict()["version"]

    results = {}
    for impl, props in json.loads(sys.argv[1]):
        ns = {"namespace_impl": impl, "namespace_properties": props}
        tid = ["sales", "events"]
        first = daft.from_pydict({"id": list(range(1000))}).with_column("v", col("id") * 2)
        versions = committed(daft_lance.write_lance(first, table_id=tid, mode="create", **ns))
        more = daft.from_pydict({"id": list(range(1000, 1500)), "v": [1] * 500})
        versions += committed(daft_lance.write_lance(more, table_id=tid, mode="append", **ns))
        count, sum_id, sum_v = summary(daft_lance.read_lance(table_id=tid, **ns), "id", "v")
        ours_count, ours_sum = summary(daft_lance.read_lance(table_id=["sales", "ours"], **ns), "x")
        client = type(get_or_create_namespace(impl, props))  # the client daft-lance connected with
        results[impl] = {"client": f"{client.__module__}.{client.__qualname__}", "versions": versions,
                         "count": count, "sum_id": sum_id, "sum_v": sum_v,
                         "ours_count": ours_count, "ours_sum": ours_sum}
    print("RESULT " + json.dumps(results), flush=True)
    # done: leave without the interpreter's teardown, where Daft's native threads and pyarrow's
    # have crashed the process after a complete run ("PyGILState_Release ... finalizing", once)
    os._exit(0)
''')

#: what the job's two writes hold: ids 0..1499, v = 2*id for the first 1000, 1 for the rest;
#: one commit each (versions 1 and 2)
EXPECTED = {"versions": [1, 2], **engines.EXPECTED}


def _name(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


@pytest.fixture(scope="session")
def daft_python(lance_ns_wheel, tmp_path_factory):
    return engines.engine_python(lance_ns_wheel, tmp_path_factory.mktemp("daft") / "venv", DAFT_REQUIREMENTS)


def test_daft_writes_appends_and_reads_by_name_and_over_rest(daft_python, tmp_path):
    with engines.namespaces(tmp_path) as (plan, clients):
        results = engines.job_results(daft_python, JOB, plan, tmp_path, timeout=600)
        assert results == {"lance_ns.dir": {"client": _name(lance_ns.load_class("dir")), **EXPECTED},
                           "rest": {"client": _name(RestNamespace), **EXPECTED}}, results
        engines.assert_written(clients, version=2)  # one commit per Daft write
