"""A CreateNamespace that loses a race with a catalog error of its own (HMS 3.1's losing
create_database removes the directory the winner made and fails its chmod: an internal
error, not AlreadyExists) is judged by what the catalog holds afterwards."""

import pytest

from lance_ns.errors import InternalError, code_of
from lance_ns.impls.memory import MemoryNamespace


class LosesTheRace(MemoryNamespace):
    """Another writer's namespace lands while this create fails inside the catalog."""

    winner_lands = True

    def create_namespace_entry(self, ns, properties):
        if self.winner_lands:
            super().create_namespace_entry(ns, {"by": "winner"})
        raise InternalError("metastore error in create_database: chmod: cannot access ...")


@pytest.fixture
def ns(tmp_path):
    return LosesTheRace(root=str(tmp_path))


def test_exist_ok_takes_the_winners_namespace(ns):
    assert ns.create_namespace({"id": ["a"], "mode": "exist_ok"}).properties == {"by": "winner"}


def test_create_answers_already_exists_not_internal(ns):
    with pytest.raises(Exception) as e:
        ns.create_namespace({"id": ["a"]})
    assert code_of(e.value) == 2


def test_an_internal_error_with_nothing_created_stays_internal(ns):
    ns.winner_lands = False
    with pytest.raises(Exception) as e:
        ns.create_namespace({"id": ["a"], "mode": "exist_ok"})
    assert code_of(e.value) == 18
    assert ns.list_namespaces({"id": []}).namespaces == []
