"""Ray Data through lance-ray (PyPI ``lance-ray``), a client nobody here wrote, writing,
appending to and reading lance-ns tables -- by backend name on Ray's workers
(``namespace_impl="lance_ns.dir"``: each worker connects through lance_namespace's
registry) and over REST at ``lance-ns serve`` (``namespace_impl="rest"``, pylance's
own client) -- with exact counts and sums, read back by lance-ns and pylance here.

Ray wants pandas 3 and our pyspark pins pandas < 3, so Ray runs in an environment of
its own, made with ``uv`` from this package's wheel (tests/packaging/install.py).
"""

from __future__ import annotations

import textwrap

import pytest

from . import engines

pytestmark = pytest.mark.slow

#: lance-ray 0.5 and the Ray Data it was made for (pandas 3 comes with it)
RAY_REQUIREMENTS = ("lance-ray>=0.5,<0.6", "ray[data]>=2.50,<3")

JOB = textwrap.dedent('''
    import json, sys
    import ray, lance_ray
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False

    def summary(ds, *columns):
        rows = ds.take_all()  # one execution, summed here
        return [len(rows)] + [sum(r[c] for r in rows) for c in columns]

    results = {}
    for impl, props in json.loads(sys.argv[1]):
        tid = ["sales", "events"]
        first = ray.data.range(1000, override_num_blocks=2).map_batches(lambda b: {"id": b["id"], "v": b["id"] * 2})
        lance_ray.write_lance(first, table_id=tid, namespace_impl=impl, namespace_properties=props, mode="create")
        more = ray.data.range(500, override_num_blocks=1).map_batches(lambda b: {"id": b["id"] + 1000, "v": b["id"] * 0 + 1})
        lance_ray.write_lance(more, table_id=tid, namespace_impl=impl, namespace_properties=props, mode="append")
        count, sum_id, sum_v = summary(lance_ray.read_lance(table_id=tid, namespace_impl=impl,
                                                            namespace_properties=props), "id", "v")
        ours_count, ours_sum = summary(lance_ray.read_lance(table_id=["sales", "ours"], namespace_impl=impl,
                                                            namespace_properties=props), "x")
        results[impl] = {"count": count, "sum_id": sum_id, "sum_v": sum_v, "ours_count": ours_count, "ours_sum": ours_sum}
    print("RESULT " + json.dumps(results))
''')

#: what the job's two writes hold (tests/interop/engines.py)
EXPECTED = engines.EXPECTED


@pytest.fixture(scope="session")
def ray_python(lance_ns_wheel, tmp_path_factory):
    return engines.engine_python(lance_ns_wheel, tmp_path_factory.mktemp("ray") / "venv", RAY_REQUIREMENTS)


def test_ray_writes_appends_and_reads_by_name_and_over_rest(ray_python, tmp_path):
    with engines.namespaces(tmp_path) as (plan, clients):
        results = engines.job_results(ray_python, JOB, plan, tmp_path, timeout=900)
        assert results == {"lance_ns.dir": EXPECTED, "rest": EXPECTED}, results
        engines.assert_written(clients)
