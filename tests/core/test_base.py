"""The shared base: dict or model requests, id validation, ListOperations."""

import pytest
from lance_namespace import CreateNamespaceRequest, ListNamespacesResponse
from lance_namespace.errors import InvalidInputError

import lance_ns
from lance_ns.base import BY_OP_ID, OPERATIONS, NamespaceBase


def test_registry_covers_the_interface():
    assert len(OPERATIONS) >= 54
    assert BY_OP_ID["GetTable"] is OPERATIONS["describe_table"]
    assert OPERATIONS["create_table"].has_data and not OPERATIONS["declare_table"].has_data


def test_dict_model_json_and_none_requests():
    ns = lance_ns.connect("memory")
    ns.create_namespace({"id": ["a"]})
    ns.create_namespace(CreateNamespaceRequest(id=["b"]))
    ns.create_namespace('{"id": ["c"]}')
    assert isinstance(ns.list_namespaces(None), ListNamespacesResponse)
    assert ns.list_namespaces({}).namespaces == ["a", "b", "c"]
    assert ns.call("ListNamespaces", {}).namespaces == ["a", "b", "c"]
    assert ns.get_namespace({"id": ["a"]}).properties == {}


@pytest.mark.parametrize("bad", [{"id": "a"}, {"id": [1]}, {"limit": "x"}, 42, "{not json"])
def test_malformed_requests_are_invalid_input(bad):
    ns = lance_ns.connect("memory")
    with pytest.raises(InvalidInputError):
        ns.list_namespaces(bad)


def test_list_operations_names_what_the_class_implements():
    ops = lance_ns.connect("memory").list_operations()
    assert {"DeclareTable", "CreateTable", "QueryTable"} <= set(ops)
    assert "CreateTableBranch" in ops and "AlterTransaction" in ops and "CreateMaterializedView" not in ops


def test_secrets_are_not_shown_in_namespace_id():
    class N(NamespaceBase):
        pass

    n = N(uri="http://x", auth_token="s3cr3t", **{"storage.aws_secret_access_key": "k"})
    assert "s3cr3t" not in n.namespace_id() and "'k'" not in repr(n)
    assert n.storage_options == {"aws_secret_access_key": "k"}


def test_bad_property_values_are_invalid_input():
    class N(NamespaceBase):
        pass

    n = N(pool="x", flag="maybe")
    with pytest.raises(InvalidInputError):
        n.int_prop("pool", 3)
    with pytest.raises(InvalidInputError):
        n.bool_prop("flag", True)


def test_every_namespace_is_a_context_manager_that_closes(tmp_path):
    import lance_ns

    closed = []
    with lance_ns.connect("memory", {"root": str(tmp_path)}) as ns:
        ns.close = lambda: closed.append(True)  # the instance's close is what __exit__ calls
        ns.create_namespace({"id": ["a"]})
    assert closed == [True]
    with lance_ns.connect("dir", {"root": str(tmp_path / "d")}) as d:
        d.declare_table({"id": ["t"]})
    d.close()  # a second close is harmless


def test_purge_is_asked_for_by_the_request_context():
    from lance_namespace import DropNamespaceRequest, DropTableRequest

    from lance_ns.catalog.entry import purge_requested

    assert not purge_requested(DropTableRequest(id=["t"]))
    assert not purge_requested(DropTableRequest(id=["t"], context={"purge": "false"}))
    assert purge_requested(DropTableRequest(id=["t"], context={"purge": "true"}))
    assert purge_requested(DropNamespaceRequest(id=["a"], context={"purge": "TRUE"}))
