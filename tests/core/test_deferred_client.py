"""lance_namespace's generated REST client, imported through lance_ns, builds none of its
API methods' validators until one is called, and validates as before once it is
(see lance_ns.deferred_client).  Each case runs in a fresh interpreter: the deferral is
decided at import."""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import json, sys
{first}
import lance_namespace, pydantic
from lance_namespace_urllib3_client import api as client_api

def wrappers():
    for cls in vars(client_api).values():
        if isinstance(cls, type):
            for fn in vars(cls).values():
                cell = [c.cell_contents for c in (getattr(fn, "__closure__", None) or ())]
                yield from (c.__self__ for c in cell if hasattr(getattr(c, "__self__", None), "__pydantic_complete__"))

before = [w.__pydantic_complete__ for w in wrappers()]
from lance_namespace_urllib3_client.api_client import ApiClient
try:
    client_api.TableApi(ApiClient()).describe_table(id=5, describe_table_request=None)
    rejected = False
except pydantic.ValidationError as e:
    rejected = "string_type" in str(e)
print(json.dumps({{"methods": len(before), "built": sum(before), "rejected": rejected,
                  "decorator_restored": pydantic.validate_call.__module__ == "pydantic.validate_call_decorator"}}))
"""


def _probe(first: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _PROBE.format(first=first)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_through_lance_ns_no_validator_is_built_until_a_call_and_a_call_still_validates():
    seen = _probe("import lance_ns")
    assert seen["methods"] > 300  # the probe finds the client's methods
    assert seen["built"] == 0
    assert seen["rejected"]  # id=5 is refused as before: the validator is built at the call
    assert seen["decorator_restored"]


def test_a_client_imported_before_lance_ns_is_left_as_it_was():
    seen = _probe("import lance_namespace_urllib3_client, lance_ns")
    assert seen["built"] == seen["methods"] > 300
    assert seen["rejected"] and seen["decorator_restored"]


_THIRD_PARTY = """
import json, sys
import lance_ns  # first, as a lance-ns process does: the client's validators are deferred
import lance
import pyarrow as pa
import lance_namespace_urllib3_client as gen
from lance_ns.server import run_server_in_thread
from lance_ns.datasets import table_to_ipc_stream

ns = lance_ns.connect("dir", {"root": sys.argv[1]})
with run_server_in_thread(ns) as srv:
    api = gen.ApiClient(gen.Configuration(host=srv.url))
    gen.NamespaceApi(api).create_namespace("d", gen.CreateNamespaceRequest())
    data = gen.DataApi(api)
    data.create_table("d$theirs", table_to_ipc_stream(pa.table({"id": [1, 2, 3]})))
    theirs = lance.dataset(ns.describe_table({"id": ["d", "theirs"]}).location).count_rows()
    ns.create_table({"id": ["d", "ours"]}, table_to_ipc_stream(pa.table({"id": [1, 2]})))
    ours = data.count_table_rows("d$ours", gen.CountTableRowsRequest())
print(json.dumps({"loader": type(gen.api.data_api.__loader__).__name__, "theirs": theirs, "ours": ours}))
"""


def test_the_deferred_client_drives_our_server_and_reads_what_ours_wrote(tmp_path):
    """The generated client (not ours), imported after lance_ns with its validators deferred,
    creates a table with data through our server, which pylance reads from its location;
    the reverse: a table ours wrote is counted through the server by that client."""
    done = subprocess.run([sys.executable, "-c", _THIRD_PARTY, str(tmp_path / "lake")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"loader": "_DeferringLoader", "theirs": 3, "ours": 2}
