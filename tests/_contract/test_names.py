"""The tool-name rule: the quick test says exactly what the regex says."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolreg._contract.names import TOOL_NAME_RE, check_tool_name, is_tool_name

ALLOWED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
# Mostly allowed characters, with the ones a careless rule lets through.
NAMES = st.text(alphabet=st.sampled_from(ALLOWED) | st.characters(), max_size=140)


@given(NAMES)
def test_the_quick_test_agrees_with_the_regex(name: str) -> None:
    assert is_tool_name(name) == bool(TOOL_NAME_RE.fullmatch(name))


@pytest.mark.parametrize(
    "name",
    ["", "a\n", "\na", "a b", "a/b", "ä", "١", "Ａ", "a\x00", "x" * 129, " a", "a "],
)
def test_bad_names_are_refused(name: str) -> None:
    assert not is_tool_name(name)
    with pytest.raises(ValueError, match="Invalid tool name"):
        check_tool_name(name)


@pytest.mark.parametrize("name", ["a", "read_file", "mcp__s__t", "a.b-c", "x" * 128, "0"])
def test_good_names_pass(name: str) -> None:
    assert is_tool_name(name)
    check_tool_name(name)
