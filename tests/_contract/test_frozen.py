"""Tests for the read-only JSON structures definitions are shared as."""

from __future__ import annotations

import copy
import enum
import json
import pickle
from typing import Any

import pytest

from toolreg._contract.frozen import FrozenDict, FrozenList, freeze, thaw

DATA = {"a": [1, 2.5, {"b": None, "c": (True, "x")}], "d": {"e": []}}


def test_freeze_copies_into_read_only_types_all_the_way_down() -> None:
    source = copy.deepcopy(DATA)
    frozen = freeze(source)
    assert frozen == {"a": [1, 2.5, {"b": None, "c": [True, "x"]}], "d": {"e": []}}
    assert type(frozen) is FrozenDict and type(frozen["a"]) is FrozenList
    assert type(frozen["a"][2]["c"]) is FrozenList  # a tuple becomes a JSON array
    source["a"].append("later")  # the input stays the caller's
    assert len(frozen["a"]) == 3


def test_frozen_parts_are_shared_not_copied_again() -> None:
    inner = freeze({"x": [1]})
    assert freeze({"inner": inner})["inner"] is inner


@pytest.mark.parametrize(
    "attempt",
    [
        lambda d: d.__setitem__("k", 1),
        lambda d: d.__delitem__("a"),
        lambda d: d.update(k=1),
        lambda d: d.setdefault("k", 1),
        lambda d: d.pop("a"),
        lambda d: d.popitem(),
        lambda d: d.clear(),
        lambda d: d.__ior__({"k": 1}),
        lambda d: d["a"].append(1),
        lambda d: d["a"].extend([1]),
        lambda d: d["a"].insert(0, 1),
        lambda d: d["a"].remove(1),
        lambda d: d["a"].pop(),
        lambda d: d["a"].__setitem__(0, 9),
        lambda d: d["a"].__delitem__(0),
        lambda d: d["a"].__iadd__([1]),
        lambda d: d["a"].__imul__(2),
        lambda d: d["a"].reverse(),
        lambda d: d["a"].sort(),
        lambda d: d["a"].clear(),
    ],
)
def test_every_mutator_raises_type_error_saying_how_to_copy(attempt: Any) -> None:
    frozen = freeze(DATA)
    before = thaw(frozen)
    with pytest.raises(TypeError, match=r"shared.*read-only.*copy\.deepcopy"):
        attempt(frozen)
    assert frozen == before


def test_copies_are_plain_and_mutable() -> None:
    frozen = freeze(DATA)
    deep = copy.deepcopy(frozen)
    assert type(deep) is dict and type(deep["a"]) is list and type(deep["a"][2]) is dict
    deep["a"][2]["b"] = "mine"
    assert frozen["a"][2]["b"] is None
    for shallow in (dict(frozen), frozen.copy(), copy.copy(frozen)):
        assert type(shallow) is dict and shallow == frozen
    assert type(list(frozen["a"])) is list and type(frozen["a"] + [0]) is list
    assert type(frozen | {"k": 1}) is dict


def test_pickle_and_json_round_trip() -> None:
    frozen = freeze(DATA)
    again = pickle.loads(pickle.dumps(frozen))
    assert again == frozen and type(again) is FrozenDict and type(again["a"]) is FrozenList
    assert json.loads(json.dumps(frozen)) == json.loads(json.dumps(thaw(frozen)))


def test_subclasses_of_json_scalars_become_the_plain_types() -> None:
    class Mode(str, enum.Enum):
        READ = "read"

    class Count(int):
        pass

    frozen = freeze({Mode.READ: [Mode.READ, Count(3)]})
    assert frozen == {"read": ["read", 3]}
    assert [type(v) for v in frozen["read"]] == [str, int]
    assert type(next(iter(frozen))) is str


@pytest.mark.parametrize(
    "value,where",
    [
        ({"a": {"b": [1, object()]}}, r"a\.b\[1\] holds a value of type 'object'"),
        ({"a": {1: "x"}}, "a has a key that is not a string: 1"),
        ({"a": {1, 2}}, "a holds a value of type 'set'"),
    ],
)
def test_what_json_cannot_hold_is_refused_naming_where(value: Any, where: str) -> None:
    with pytest.raises(TypeError, match=where):
        freeze(value)
