"""Hive MetaStore namespaces over the metastore's Thrift API.

* ``hive2`` (alias ``hive``): the HMS 2.x model, ``database$table``; the
  root lists databases.
* ``hive3``: the Hive 3 model (``impl-hive3.md``), ``catalog$database$table``;
  the root lists catalogs.  Against a 2.x metastore, which has no catalog API
  (``get_catalogs`` answers UNKNOWN_METHOD), the server's single default
  catalog ``hive`` is the only level-1 namespace and creating or dropping a
  catalog is Unsupported (code 0).  The capability is probed once per client.

Tables are ``EXTERNAL_TABLE`` objects with parameters ``EXTERNAL=TRUE`` (without
it HMS stores a MANAGED_TABLE, whose drop deletes the data) and
``table_type=lance``; the location is the storage descriptor's.  Tables and
databases are always dropped with ``deleteData=false``: data removal is ours
(DropTable) and never the metastore's.  Lance tables the upstream
implementations (lance-namespace-impls) made are ``MANAGED_TABLE`` with
``table_type=lance``: listed, described and renamed like ours; their data is
deleted only on an explicit purge (see ``deletes_data_of``).

Names: HMS lowercases database, table and catalog names on write and lookup,
so ``Events`` would be stored and listed as ``events``.  Rather than answer
with a name the caller never gave, names with upper-case letters are refused
(InvalidInput, code 13); declare, list and describe then round-trip exactly.

Properties: ``uri`` (``thrift://host:port``, required; a comma-separated list
of metastores is tried in order), ``client.pool-size``
(default 3), ``client.connect-timeout-ms`` (default 10000),
``client.socket-timeout-ms`` (default 60000; a call that gets no answer in this
time fails with ServiceUnavailable, code 17), ``client.pool-timeout-ms``
(default: the socket timeout; how long a caller waits for a free connection),
``root`` (default: current directory), ``lock.timeout-ms`` (default 30000: how long
a commit of an implementation-managed table waits for another holder's table lock
before answering ConcurrentModification, code 14), ``storage.*``.

Implementation-managed tables (``managed_versioning=true``) keep their version
history in the table's parameters; a commit changes them under EXCLUSIVE table
locks of the metastore's lock API (lock / check_lock / heartbeat / unlock), which
needs the metastore's transaction tables: without them managed mode is refused
with code 0 and the reason (probed once per client).

Namespace properties of a database: its parameters map plus the special keys
``database.description``, ``database.location-uri``, ``database.owner`` and
``database.owner-type`` (USER, ROLE or GROUP), stored in the Database object's
own fields.  A catalog (Hive 3) has only ``catalog.description`` and
``catalog.location-uri`` (default ``ROOT/<catalog>``); other keys are refused.

Modules: :mod:`.pool` (the Thrift connection pool), :mod:`.errors` (metastore
exceptions -> spec errors, by type and by the call that raised them) and
:mod:`.namespace` (the backends, whose every Thrift call goes through
``_call``: one pooled connection, failures translated).
"""

from .namespace import Hive2Namespace, Hive3Namespace
from .errors import translate_hms_error
from .pool import ClientPool

__all__ = ["Hive2Namespace", "Hive3Namespace", "ClientPool", "translate_hms_error"]
