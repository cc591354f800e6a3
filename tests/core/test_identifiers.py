import pytest
from lance_namespace.errors import InvalidInputError

from lance_ns.identifiers import parse_id, split_table_id, to_string, validate_id, validate_name


@pytest.mark.parametrize(
    "bad", ["", "a/b", "a\\b", ".", "..", "x..y", "nul\x00", "tab\tx", "del\x7f", " lead", "trail ", "é" * 200]
)
def test_names_that_are_paths_or_control_chars_are_invalid(bad):
    with pytest.raises(InvalidInputError) as e:
        validate_name(bad)
    assert e.value.code == 13


@pytest.mark.parametrize("good", ["events", "Events-2024", "a.b", "with space", "ü", "x" * 255])
def test_ordinary_names_pass(good):
    assert validate_name(good) == good


def test_string_and_list_forms_round_trip():
    assert parse_id("a.b.c") == ["a", "b", "c"]
    assert parse_id("a$b", "$") == ["a", "b"]
    assert to_string(["a", "b"], "$") == "a$b"
    assert parse_id(["x", "y"]) == ["x", "y"]


@pytest.mark.parametrize("root", [None, "", "$", []])
def test_root_forms(root):
    assert parse_id(root, "$") == []


@pytest.mark.parametrize("bad", ["a$$b", "$a", "a$", "a$..$b"])
def test_empty_or_traversal_components_are_invalid(bad):
    with pytest.raises(InvalidInputError):
        parse_id(bad, "$")


def test_table_id_needs_a_name():
    assert split_table_id(["ns", "t"]) == (["ns"], "t")
    assert split_table_id(["t"]) == ([], "t")
    with pytest.raises(InvalidInputError):
        split_table_id([])
    with pytest.raises(InvalidInputError):
        split_table_id("ns.t")  # a string where a list is required


@pytest.mark.parametrize("bad", [["a/b"], ["ok", "b/c"], ["a", ".."], ["a", ""], ["a", 1], ["x" * 256], ["a\x00", "b"],
                                 ["ok", "/"], ["/", "ok"], ["a", "tab\t"], "ab"])
def test_a_list_id_is_refused_whatever_its_shape(bad):
    """validate_id matches a whole id of plain names at once; a "/" inside one name
    must not pass as two plain names."""
    with pytest.raises(InvalidInputError) as e:
        validate_id(bad)
    assert e.value.code == 13


@pytest.mark.parametrize("good", [["a"], ["t", "x1"], ["A-b_c", "9" * 255], ["with space", "ü"], ("a", "b"), []])
def test_a_list_id_of_valid_names_passes_as_a_new_list(good):
    got = validate_id(good)
    assert got == list(good) and type(got) is list and got is not good
