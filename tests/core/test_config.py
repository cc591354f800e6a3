import pytest
from lance_namespace import LanceNamespace
from lance_namespace.errors import InvalidInputError

import lance_ns
from lance_ns.config import IMPLS, load_class, named_config, split_config
from lance_ns.impls.memory import MemoryNamespace


def test_aliases_and_class_paths_resolve_to_the_same_class():
    assert load_class("memory") is MemoryNamespace
    assert load_class("lance_ns.impls.memory:MemoryNamespace") is MemoryNamespace
    assert load_class("lance_ns.impls.memory.MemoryNamespace") is MemoryNamespace


def test_every_alias_names_a_namespace_class():
    for alias in IMPLS:
        assert issubclass(load_class(alias), LanceNamespace), alias


@pytest.mark.parametrize("bad", ["", "nope", "os:path", "lance_ns.nothing:X"])
def test_bad_impls_are_invalid_input(bad):
    with pytest.raises(InvalidInputError):
        load_class(bad)


def test_tool_config_strips_the_impl_prefix_and_ignores_other_keys(tmp_path):
    impl, props = split_config({"impl": "memory", "memory.root": str(tmp_path), "spark.x": "1", "root": "no"})
    assert impl == "memory" and props == {"root": str(tmp_path)}
    ns = lance_ns.from_config({"impl": "memory", "memory.root": str(tmp_path)})
    assert isinstance(ns, MemoryNamespace) and ns.root == str(tmp_path)


def test_one_prefix_rule_for_the_tool_config_the_environment_and_spark(tmp_path):
    """An alias is its own prefix; a class path's is the class name: the flat
    tool config, the LANCE_NS_* environment and the Spark options agree."""
    from lance_ns.config import env_config
    from lance_ns.spark.options import SourceOptions

    cls = "lance_ns.impls.memory:MemoryNamespace"
    flat = {"impl": cls, "MemoryNamespace.root": str(tmp_path)}
    assert split_config(flat) == (cls, {"root": str(tmp_path)})
    assert env_config({"LANCE_NS_IMPL": cls, "LANCE_NS_MEMORYNAMESPACE_ROOT": str(tmp_path)}) == flat
    spark = SourceOptions.parse({"impl": cls, "MemoryNamespace.root": str(tmp_path), "table": "t"})
    assert spark.ns_config == flat
    assert split_config({"impl": "memory", "memory.root": "/m"}) == ("memory", {"root": "/m"})


def test_from_config_needs_impl():
    with pytest.raises(InvalidInputError):
        lance_ns.from_config({"dir.root": "/x"})


def test_connect_stringifies_values(tmp_path):
    ns = lance_ns.connect("memory", {"root": tmp_path, "flag": True, "n": 3, "skip": None})
    assert ns.properties == {"root": str(tmp_path), "flag": "true", "n": "3"}


def test_named_config_from_file_and_env(tmp_path, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[namespaces.lab]\nimpl = "memory"\nroot = "{tmp_path}"\n[namespaces.lab.storage]\nregion = "eu"\n')
    monkeypatch.setenv("LANCE_NS__LAB__STORAGE__ENDPOINT", "http://127.0.0.1:9")
    props = named_config("lab", cfg)
    assert props == {"impl": "memory", "root": str(tmp_path), "storage.region": "eu", "storage.endpoint": "http://127.0.0.1:9"}
    monkeypatch.setenv("LANCE_NS_CONFIG", str(cfg))
    ns = lance_ns.load_namespace("lab")
    assert ns.storage_options == {"region": "eu", "endpoint": "http://127.0.0.1:9"}
    with pytest.raises(InvalidInputError):
        lance_ns.load_namespace("missing")
