"""The behavioural suite every backend must pass (see backends/__init__.py).

Each test runs in a fresh namespace (``scope.id``) under the backend's
parent namespace.  Requests are sent as plain dicts, the form pylance's Rust
core uses, except where a test checks the model form.
"""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from lance_namespace import CreateNamespaceRequest, DescribeTableRequest, LanceNamespaceError

from lance_ns.walk import drop_tree

INVALID_NAMES = ["", "a/b", "a\\b", "..", "x..y", "bad\x00name", "tab\tname", " lead"]


def code_of(fn, *args):
    with pytest.raises(LanceNamespaceError) as info:
        fn(*args)
    return int(info.value.code)


def sample(n=10, start=0):
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()), "name": [f"n{i}" for i in range(start, start + n)]})


# -- namespaces ----------------------------------------------------------------


def test_namespace_lifecycle(scope):
    c = scope.client
    c.namespace_exists({"id": scope.id})
    assert scope.id[-1] in c.list_namespaces({"id": scope.ctx.parent}).namespaces
    assert code_of(c.create_namespace, {"id": scope.id}) == 2
    assert code_of(c.create_namespace, {"id": scope.id, "mode": "Create"}) == 2
    c.create_namespace({"id": scope.id, "mode": "ExistOk"})
    c.create_namespace({"id": scope.id, "mode": "exist_ok"})
    c.drop_namespace({"id": scope.id})
    assert code_of(c.namespace_exists, {"id": scope.id}) == 1
    assert code_of(c.describe_namespace, {"id": scope.id}) == 1
    assert scope.id[-1] not in c.list_namespaces({"id": scope.ctx.parent}).namespaces
    c.create_namespace({"id": scope.id})  # for the fixture's cleanup


def test_drop_missing_namespace_modes(scope):
    c = scope.client
    missing = scope.ctx.parent + [scope.id[-1] + "_missing"]
    if scope.has("drop_missing_ok"):
        c.drop_namespace({"id": missing})
    else:
        assert code_of(c.drop_namespace, {"id": missing}) == 1
        assert code_of(c.drop_namespace, {"id": missing, "mode": "Fail"}) == 1
    c.drop_namespace({"id": missing, "mode": "Skip"})


def test_missing_namespace_is_not_found(scope):
    c = scope.client
    missing = scope.ctx.parent + [scope.id[-1] + "_nope"]
    assert code_of(c.describe_namespace, {"id": missing}) == 1
    assert code_of(c.namespace_exists, {"id": missing}) == 1
    assert code_of(c.list_tables, {"id": missing}) == 1
    assert code_of(c.declare_table, {"id": missing + ["t"]}) == 1


@pytest.mark.needs("ns_properties")
def test_namespace_properties_round_trip(scope):
    c = scope.client
    ns = scope.ctx.parent + [scope.id[-1] + "_p"]
    try:
        c.create_namespace({"id": ns, "properties": {"owner_team": "data", "purpose": "conformance"}})
        props = c.describe_namespace({"id": ns}).properties
        assert props["owner_team"] == "data" and props["purpose"] == "conformance"
    finally:
        c.drop_namespace({"id": ns, "mode": "Skip"})


def test_model_and_dict_requests_agree(scope):
    c = scope.client
    ns = scope.ctx.parent + [scope.id[-1] + "_m"]
    try:
        c.create_namespace(CreateNamespaceRequest(id=ns))
        assert code_of(c.create_namespace, {"id": ns}) == 2
    finally:
        c.drop_namespace({"id": ns, "mode": "Skip"})


@pytest.mark.parametrize("bad", INVALID_NAMES, ids=repr)
def test_invalid_names_are_refused_and_nothing_is_written(scope, bad):
    c = scope.client
    before_ns = c.list_namespaces({"id": scope.id}).namespaces if scope.has("nested") else None
    before_tables = c.list_tables({"id": scope.id}).tables
    target = scope.id if scope.has("nested") else scope.ctx.parent
    assert code_of(c.create_namespace, {"id": target + [bad]}) == 13
    assert code_of(c.declare_table, {"id": scope.child(bad)}) == 13
    assert code_of(c.describe_table, {"id": scope.child(bad)}) == 13
    if before_ns is not None:
        assert c.list_namespaces({"id": scope.id}).namespaces == before_ns
    assert c.list_tables({"id": scope.id}).tables == before_tables


@pytest.mark.parametrize("field,value", [("mode", "Sometimes"), ("behavior", "Explode")])
def test_unknown_modes_are_invalid_input(scope, field, value):
    c = scope.client
    if field == "mode":
        assert code_of(c.create_namespace, {"id": scope.id, "mode": value}) == 13
    assert code_of(c.drop_namespace, {"id": scope.id, field: value}) == 13
    c.namespace_exists({"id": scope.id})  # still there


@pytest.mark.needs("at_root")
def test_root_cannot_be_created_or_dropped(scope):
    c = scope.client
    assert code_of(c.create_namespace, {"id": []}) == 13
    assert code_of(c.drop_namespace, {"id": []}) == 13


@pytest.mark.needs("nested")
def test_nested_namespaces(scope):
    c = scope.client
    c.create_namespace({"id": scope.child("inner")})
    assert c.list_namespaces({"id": scope.id}).namespaces == ["inner"]
    c.declare_table({"id": scope.child("inner", "t")})
    assert c.list_tables({"id": scope.child("inner")}).tables == ["t"]
    assert code_of(c.drop_namespace, {"id": scope.id}) == 3
    assert code_of(c.create_namespace, {"id": scope.child("nope", "x")}) == 1


@pytest.mark.needs("nested")
def test_namespace_paging(scope):
    c = scope.client
    names = [f"ns{i:02d}" for i in range(7)]
    for n in reversed(names):
        c.create_namespace({"id": scope.child(n)})
    assert c.list_namespaces({"id": scope.id}).namespaces == names
    assert _all_pages(c.list_namespaces, scope.id, "namespaces", 3) == names


def _all_pages(fn, ns, field, limit):
    out, token, pages = [], None, 0
    while True:
        resp = fn({"id": ns, "limit": limit, "page_token": token})
        got = getattr(resp, field)
        assert len(got) <= limit
        out += got
        pages += 1
        token = resp.page_token
        if not token:
            return out
        assert pages < 100, "paging does not terminate"


def test_negative_limit_is_invalid(scope):
    assert code_of(scope.client.list_tables, {"id": scope.id, "limit": -1}) == 13


# -- tables --------------------------------------------------------------------


def test_declare_describe_list_exists(scope):
    c = scope.client
    resp = c.declare_table({"id": scope.child("events")})
    assert resp.location
    c.table_exists({"id": scope.child("events")})
    d = c.describe_table({"id": scope.child("events")})
    assert d.location == resp.location
    assert c.list_tables({"id": scope.id}).tables == ["events"]
    assert code_of(c.declare_table, {"id": scope.child("events")}) == 5


def test_missing_table_is_not_found(scope):
    c = scope.client
    assert code_of(c.describe_table, {"id": scope.child("ghost")}) == 4
    assert code_of(c.table_exists, {"id": scope.child("ghost")}) == 4
    assert code_of(c.drop_table, {"id": scope.child("ghost")}) == 4
    assert code_of(c.deregister_table, {"id": scope.child("ghost")}) == 4


@pytest.mark.needs("table_properties")
def test_table_properties_round_trip(scope):
    c = scope.client
    c.declare_table({"id": scope.child("p"), "properties": {"team": "ml"}})
    props = c.describe_table({"id": scope.child("p")}).properties
    assert props["team"] == "ml"


def test_table_paging_is_sorted_complete_and_bounded(scope):
    c = scope.client
    names = [f"tbl_{i:02d}" for i in range(7)]
    for n in reversed(names):
        c.declare_table({"id": scope.child(n)})
    assert c.list_tables({"id": scope.id}).tables == names
    for limit in (1, 3, 7, 50):
        assert _all_pages(c.list_tables, scope.id, "tables", limit) == names


def test_writes_between_pages_are_seen_by_the_pages_after_them(scope):
    """An enumeration in pages while this client writes: a table declared after the last
    page's token is on a later page, one deregistered after it is on none (a backend that
    keeps a listing read whole for its continuation pages, as Glue's, drops it on a write)."""
    c = scope.client
    names = [f"tbl_{i:02d}" for i in range(6)]
    for n in names:
        c.declare_table({"id": scope.child(n)})
    first = c.list_tables({"id": scope.id, "limit": 2})
    assert first.tables == names[:2] and first.page_token
    c.declare_table({"id": scope.child("tbl_03a")})
    c.deregister_table({"id": scope.child("tbl_04")})
    rest, token = [], first.page_token
    while token:
        page = c.list_tables({"id": scope.id, "limit": 2, "page_token": token})
        rest, token = rest + page.tables, page.page_token
    assert rest == ["tbl_02", "tbl_03", "tbl_03a", "tbl_05"]


def test_drop_namespace_restrict_and_cascade(scope):
    c = scope.client
    c.declare_table({"id": scope.child("t")})
    assert code_of(c.drop_namespace, {"id": scope.id}) == 3
    assert code_of(c.drop_namespace, {"id": scope.id, "behavior": "Restrict"}) == 3
    c.table_exists({"id": scope.child("t")})  # nothing lost
    if scope.has("cascade"):
        c.drop_namespace({"id": scope.id, "behavior": "Cascade"})
        assert code_of(c.namespace_exists, {"id": scope.id}) == 1
        c.create_namespace({"id": scope.id})
    else:
        assert code_of(c.drop_namespace, {"id": scope.id, "behavior": "Cascade"}) == 0
        c.table_exists({"id": scope.child("t")})


@pytest.mark.needs("data")
def test_write_and_read_through_namespace(scope):
    c = scope.client
    tid = scope.child("data")
    lance.write_dataset(sample(10), namespace_client=c, table_id=tid, mode="create")
    lance.write_dataset(sample(5, 10), namespace_client=c, table_id=tid, mode="append")
    ds = lance.dataset(namespace_client=c, table_id=tid)
    assert ds.count_rows() == 15
    assert sorted(ds.to_table(columns=["id"])["id"].to_pylist()) == list(range(15))
    lance.write_dataset(sample(3), namespace_client=c, table_id=tid, mode="overwrite")
    assert lance.dataset(namespace_client=c, table_id=tid).count_rows() == 3
    assert "data" in c.list_tables({"id": scope.id}).tables


@pytest.mark.needs("data", "detail")
def test_detailed_metadata(scope):
    c = scope.client
    tid = scope.child("detail")
    lance.write_dataset(sample(4), namespace_client=c, table_id=tid, mode="create")
    lance.write_dataset(sample(4), namespace_client=c, table_id=tid, mode="append")
    d = c.describe_table(DescribeTableRequest(id=tid, load_detailed_metadata=True))
    assert d.version == 2
    assert [f.name for f in d.var_schema.fields] == ["id", "name"]
    old = c.describe_table({"id": tid, "version": 1, "load_detailed_metadata": True})
    assert old.version == 1
    assert code_of(c.describe_table, {"id": tid, "version": 99, "load_detailed_metadata": True}) == 11


@pytest.mark.needs("data", "register")
def test_deregister_keeps_data_and_register_brings_it_back(scope):
    c = scope.client
    tid = scope.child("reg")
    lance.write_dataset(sample(6), namespace_client=c, table_id=tid, mode="create")
    location = c.describe_table({"id": tid}).location
    out = c.deregister_table({"id": tid})
    assert out.location == location
    assert "reg" not in c.list_tables({"id": scope.id}).tables
    assert code_of(c.describe_table, {"id": tid}) == 4
    assert lance.dataset(location, storage_options=scope.ctx.storage_options or None).count_rows() == 6
    c.register_table({"id": tid, "location": location})
    assert lance.dataset(namespace_client=c, table_id=tid).count_rows() == 6
    assert code_of(c.register_table, {"id": tid, "location": location}) == 5
    c.register_table({"id": tid, "location": location, "mode": "Overwrite"})
    assert code_of(c.register_table, {"id": scope.child("reg2"), "location": location + "_nothing_here"}) == 13
    assert "reg2" not in c.list_tables({"id": scope.id}).tables


@pytest.mark.needs("data")
def test_drop_table_removes_entry_and_data(scope):
    c = scope.client
    tid = scope.child("gone")
    lance.write_dataset(sample(3), namespace_client=c, table_id=tid, mode="create")
    location = c.describe_table({"id": tid}).location
    c.drop_table({"id": tid})
    assert code_of(c.describe_table, {"id": tid}) == 4
    with pytest.raises(Exception):
        lance.dataset(location, storage_options=scope.ctx.storage_options or None)


@pytest.mark.needs("data")
def test_declared_table_then_create_with_pylance(scope):
    c = scope.client
    tid = scope.child("declared")
    c.declare_table({"id": tid})
    # pylance's create mode declares the table itself, so a declared table is
    # already taken; appending to a declared-only table is how data arrives.
    with pytest.raises(Exception):
        lance.write_dataset(sample(2), namespace_client=c, table_id=tid, mode="create")
    assert "declared" in c.list_tables({"id": scope.id}).tables


# == request options, locations, names, drops (one rule set for every backend) ==
#
# The options of each operation are honoured by the shared CatalogNamespace
# layer; these tests keep the directory namespace and the catalogs agreeing.


def _two_versions(scope, name):
    c = scope.client
    tid = scope.child(name)
    lance.write_dataset(sample(4), namespace_client=c, table_id=tid, mode="create")
    lance.write_dataset(sample(4, 4), namespace_client=c, table_id=tid, mode="append")
    return tid


@pytest.mark.needs("data", "detail")
def test_describe_table_at_a_tag_is_the_tags_version(scope):
    c = scope.client
    tid = _two_versions(scope, "tagged")
    lance.dataset(namespace_client=c, table_id=tid).tags.create("first", 1)
    assert c.describe_table({"id": tid, "tag": "first"}).version == 1
    assert c.describe_table({"id": tid, "tag": "first", "load_detailed_metadata": True}).version == 1
    assert c.describe_table({"id": tid, "load_detailed_metadata": True}).version == 2
    assert code_of(c.describe_table, {"id": tid, "tag": "no_such_tag"}) == 8


@pytest.mark.needs("data")
def test_table_exists_at_a_missing_version_is_version_not_found(scope):
    c = scope.client
    tid = scope.child("one_version")
    lance.write_dataset(sample(2), namespace_client=c, table_id=tid, mode="create")
    c.table_exists({"id": tid, "version": 1})
    assert code_of(c.table_exists, {"id": tid, "version": 99}) == 11
    c.table_exists({"id": tid})


@pytest.mark.needs("data")
def test_list_tables_without_declared_tables(scope):
    c = scope.client
    c.declare_table({"id": scope.child("declared_only")})
    lance.write_dataset(sample(2), namespace_client=c, table_id=scope.child("with_data"), mode="create")
    assert c.list_tables({"id": scope.id}).tables == ["declared_only", "with_data"]
    assert c.list_tables({"id": scope.id, "include_declared": True}).tables == ["declared_only", "with_data"]
    assert c.list_tables({"id": scope.id, "include_declared": False}).tables == ["with_data"]
    assert c.list_tables({"id": scope.id, "include_declared": False, "limit": 1}).tables == ["with_data"]


def _victim(scope, name="victim"):
    """A table with data, its location, and a check that nothing of it changed."""
    c = scope.client
    tid = scope.child(name)
    lance.write_dataset(sample(4), namespace_client=c, table_id=tid, mode="create")
    location = c.describe_table({"id": tid}).location

    def intact():
        assert lance.dataset(namespace_client=c, table_id=tid).count_rows() == 4
        assert lance.dataset(location, storage_options=scope.ctx.storage_options or None).count_rows() == 4

    return tid, location, intact


@pytest.mark.needs("data")
def test_locations_equal_to_or_inside_another_table_are_refused(scope):
    c = scope.client
    _, location, intact = _victim(scope)
    for loc in (location, location + "/_versions", location + "/data", location + "/sub/t.lance"):
        assert code_of(c.declare_table, {"id": scope.child("alias"), "location": loc}) == 13, loc
    if scope.has("register"):
        assert code_of(c.register_table, {"id": scope.child("alias"), "location": location}) == 13
    assert c.list_tables({"id": scope.id}).tables == ["victim"]
    intact()


@pytest.mark.needs("data")
def test_a_location_containing_another_table_is_refused(scope):
    c = scope.client
    _, location, intact = _victim(scope)
    parent = location.rstrip("/").rsplit("/", 1)[0]
    assert code_of(c.declare_table, {"id": scope.child("wrapper"), "location": parent}) == 13
    assert c.list_tables({"id": scope.id}).tables == ["victim"]
    intact()


def _registered_alias(scope):
    """A table's data registered under another name (its location is not the
    alias's own): (alias id, location)."""
    c = scope.client
    src = scope.child("src")
    lance.write_dataset(sample(3), namespace_client=c, table_id=src, mode="create")
    location = c.deregister_table({"id": src}).location
    alias = scope.child("alias")
    c.register_table({"id": alias, "location": location})
    return alias, location


def _rows_at(scope, location):
    return lance.dataset(location, storage_options=scope.ctx.storage_options or None).count_rows()


@pytest.mark.needs("data", "register")
def test_dropping_a_registered_table_keeps_its_data(scope):
    c = scope.client
    alias, location = _registered_alias(scope)
    c.drop_table({"id": alias})
    assert code_of(c.describe_table, {"id": alias}) == 4
    assert _rows_at(scope, location) == 3


@pytest.mark.needs("data", "register", "cascade")
def test_cascade_drop_keeps_the_data_of_registered_tables(scope):
    c = scope.client
    _, location = _registered_alias(scope)
    lance.write_dataset(sample(2), namespace_client=c, table_id=scope.child("own"), mode="create")
    own = c.describe_table({"id": scope.child("own")}).location
    c.drop_namespace({"id": scope.id, "behavior": "Cascade"})
    c.create_namespace({"id": scope.id})  # for the fixture's cleanup
    assert _rows_at(scope, location) == 3
    with pytest.raises(Exception):
        _rows_at(scope, own)  # the namespace's own table went with it


# (purge is a lance-ns request context entry: pylance's clients do not send it)
@pytest.mark.needs("data", "register", "ours")
def test_purge_drops_the_data_of_a_registered_table(scope):
    c = scope.client
    alias, location = _registered_alias(scope)
    c.drop_table({"id": alias, "context": {"purge": "true"}})
    with pytest.raises(Exception):
        _rows_at(scope, location)


def _written_outside(scope, name: str, sibling: bool = False) -> tuple[list[str], str]:
    """A dataset written with pylance alone (no namespace) at the location this backend
    would choose for table ``name`` (its default location, read from a declaration taken
    back at once), or at a fresh sibling of it (``sibling``: the shape CreateTable gives a
    new table where the default still holds files), then registered as ``name``:
    (table id, location).  The data is the writer's, whatever the path looks like."""
    from lance_ns import storage

    c = scope.client
    tid = scope.child(name)
    c.declare_table({"id": tid})
    location = c.deregister_table({"id": tid}).location
    if sibling:
        location = storage.fresh_variant(location)
    lance.write_dataset(sample(5), location, storage_options=scope.ctx.storage_options or None)
    c.register_table({"id": tid, "location": location})
    return tid, location


@pytest.mark.needs("data", "register")
@pytest.mark.parametrize("where", ["default", "sibling"])
def test_a_dataset_registered_at_a_location_we_would_choose_survives_drops(scope, where):
    """Ownership is recorded when a table is made, never read off its path: a dataset
    written outside lance-ns and registered at the table's default location (or at a
    sibling-shaped one) keeps every row through DropTable and through a Cascade
    DropNamespace; purge is the way to delete it on purpose."""
    c = scope.client
    tid, location = _written_outside(scope, "precious", sibling=where == "sibling")
    c.drop_table({"id": tid})
    assert code_of(c.describe_table, {"id": tid}) == 4
    assert _rows_at(scope, location) == 5, "DropTable deleted a registered table's data"
    if scope.has("cascade"):
        c.register_table({"id": tid, "location": location})
        c.drop_namespace({"id": scope.id, "behavior": "Cascade"})
        c.create_namespace({"id": scope.id})  # for the fixture's cleanup
        assert _rows_at(scope, location) == 5, "a Cascade drop deleted a registered table's data"
    from lance_ns.base import NamespaceBase

    if isinstance(scope.client, NamespaceBase):  # (purge is lance-ns's context entry: pylance sends none)
        c.register_table({"id": tid, "location": location})
        c.drop_table({"id": tid, "context": {"purge": "true"}})
        with pytest.raises(Exception):
            _rows_at(scope, location)


@pytest.mark.needs("data")
def test_a_table_the_namespace_made_loses_its_data_on_drop(scope):
    """The other side of the record: a table lance-ns made (CreateTable through pylance's
    write, and a declared one written later) is owned, wherever the namespace put it."""
    c = scope.client
    made, declared = scope.child("made"), scope.child("declared")
    lance.write_dataset(sample(2), namespace_client=c, table_id=made, mode="create")
    c.declare_table({"id": declared})
    lance.write_dataset(sample(3), namespace_client=c, table_id=declared, mode="append")
    for tid in (made, declared):
        location = c.describe_table({"id": tid}).location
        c.drop_table({"id": tid})
        with pytest.raises(Exception):
            _rows_at(scope, location)


# -- renames -------------------------------------------------------------------------------


def test_rename_moves_a_table_into_another_namespace(scope):
    """RenameTable with new_namespace_id on every backend (a sibling database on
    flat catalogs): the table leaves its namespace, keeps its location and rows,
    ListAllTables shows it under its new id; a later DropTable deletes its data: the
    namespace made the table, and a new name does not change whose data it is."""
    c = scope.client
    dest = scope.child("dest") if scope.has("nested") else scope.ctx.parent + [scope.id[-1] + "dest"]
    c.create_namespace({"id": dest})
    try:
        tid = scope.child("mover")
        if scope.has("data"):
            lance.write_dataset(sample(4), namespace_client=c, table_id=tid, mode="create")
        else:
            c.declare_table({"id": tid})
        location = c.describe_table({"id": tid}).location
        c.rename_table({"id": tid, "new_table_name": "moved", "new_namespace_id": dest})
        assert code_of(c.describe_table, {"id": tid}) == 4
        assert "mover" not in c.list_tables({"id": scope.id}).tables
        assert c.describe_table({"id": dest + ["moved"]}).location == location
        listed = c.list_all_tables({"id": dest}).tables
        assert "$".join(dest + ["moved"]) in listed, listed
        if scope.has("data"):
            assert lance.dataset(namespace_client=c, table_id=dest + ["moved"]).count_rows() == 4
            c.drop_table({"id": dest + ["moved"]})
            with pytest.raises(Exception):  # the owner recorded at creation: lance-ns
                _rows_at(scope, location)
    finally:
        drop = {"id": dest, "mode": "Skip"}
        if scope.has("cascade"):
            c.drop_namespace({**drop, "behavior": "Cascade"})
        else:
            drop_tree(c, dest)


def _spellings(location: str) -> list[str]:
    """Spellings a client may send of a location the namespace answered: a local one as
    ``file:///abs``, ``file:/abs``, ``/abs`` and ``/abs/``, a URI with a trailing slash."""
    from lance_ns import storage

    if storage.is_uri(location):
        return [location, location + "/"]
    return [f"file://{location}", f"file:{location}", location, location + "/"]


def test_a_location_is_answered_in_one_spelling(scope):
    """What DeclareTable and RegisterTable are given comes back from describe (and from the
    call itself) in the one documented form, whichever spelling was sent: a local location
    as its plain absolute path, a URI without a trailing slash (the form the namespace
    answers for the locations it chooses itself)."""
    c = scope.client
    tid = scope.child("spelled")
    c.declare_table({"id": tid})
    expected = c.deregister_table({"id": tid}).location  # a location this backend accepts for tid
    if scope.has("data") and scope.has("register"):
        lance.write_dataset(sample(1), expected, storage_options=scope.ctx.storage_options or None)
    for sent in _spellings(expected):
        declared = c.declare_table({"id": tid, "location": sent})
        assert declared.location == expected, (sent, declared.location)
        assert c.describe_table({"id": tid}).location == expected, sent
        c.deregister_table({"id": tid})
        if scope.has("data") and scope.has("register"):
            registered = c.register_table({"id": tid, "location": sent})
            assert registered.location == expected and c.describe_table({"id": tid}).location == expected, sent
            c.deregister_table({"id": tid})


# (adopt runs on a backend itself: a REST client records no owners)
@pytest.mark.needs("data", "register", "ours", "!rest")
def test_an_adopted_table_loses_its_data_on_drop(scope):
    """``lance-ns table adopt`` (CatalogNamespace.adopt_table): a registered table whose data
    is handed over to lance-ns is deleted by a later DropTable, and says so once."""
    adopt = scope.client.adopt_table
    tid, location = _written_outside(scope, "handed")
    assert adopt(tid) is True and adopt(tid) is False
    assert "lance_ns.owned" not in (scope.client.describe_table({"id": tid}).properties or {})
    scope.client.drop_table({"id": tid})
    with pytest.raises(Exception):
        _rows_at(scope, location)
