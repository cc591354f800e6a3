"""Our backends are found by name through the interface library: every alias as
``lance_ns.<alias>``, in a fresh process that never imported lance_ns, without
shadowing upstream's own ``dir`` and ``rest``."""

from __future__ import annotations

import subprocess
import sys

import lance_namespace
import pytest

import lance_ns
from lance_ns.impls import IMPLS, registered_name


def test_every_alias_is_registered_with_lance_namespace():
    import lance_ns.config  # noqa: F401  registers on import

    for alias, (path, _extra) in IMPLS.items():
        assert lance_namespace._REGISTERED_IMPLS[registered_name(alias)] == path.replace(":", ".")
    assert lance_namespace.NATIVE_IMPLS["dir"] == "lance.namespace.DirectoryNamespace"  # upstream's, untouched
    assert "dir" not in lance_namespace._REGISTERED_IMPLS and "rest" not in lance_namespace._REGISTERED_IMPLS


@pytest.mark.parametrize("alias", sorted(IMPLS))
def test_registered_name_is_the_backend_class(alias):
    assert getattr(lance_ns, alias) is lance_ns.load_class(alias)
    assert lance_ns.load_class(registered_name(alias)) is lance_ns.load_class(alias)


@pytest.mark.slow  # a fresh process or a whole build: not in the quick loop
def test_lance_namespace_connect_finds_our_backends_in_a_fresh_process(tmp_path):
    code = f"""
import sys, lance_namespace
assert "lance_ns" not in sys.modules
ours = lance_namespace.connect("lance_ns.dir", {{"root": {str(tmp_path / 'a')!r}}})
upstream = lance_namespace.connect("dir", {{"root": {str(tmp_path / 'b')!r}}})
mem = lance_namespace.connect("lance_ns.memory", {{}})
print(type(ours).__module__, type(upstream).__module__, type(mem).__module__)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["lance_ns.impls.dir.namespace", "lance.namespace", "lance_ns.impls.memory"]


def test_a_backend_whose_extra_is_missing_names_the_pip_command(monkeypatch, tmp_path):
    (tmp_path / "fake_backend.py").write_text("import lance_ns_no_such_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(IMPLS, "fake", ("fake_backend:Fake", "fake"))
    with pytest.raises(ValueError, match=r"pip install 'lance-ns\[fake\]'"):
        lance_namespace.connect("lance_ns.fake", {})


def test_an_unknown_name_under_the_prefix_is_not_found():
    with pytest.raises(ValueError, match="no attribute 'nope'"):
        lance_namespace.connect("lance_ns.nope", {})
