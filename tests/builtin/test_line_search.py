"""search_files' line matcher: searching the whole text gives exactly the lines grep would."""

from __future__ import annotations

import itertools

import pytest
import regex

from toolreg.builtin_tools._line_search import LineMatcher

PATTERNS = [
    "a",
    r"\s+$",
    "^$",
    "^",
    "$",
    "x*",
    r"a\s*b",
    "x[^y]*z",
    r"\bfoo\b",
    r"\Bar",
    r"(?i)FOO",
    r"(?s)a.b",
    r"(?m)^b",
    "foo(?=bar)",
    "(?<!x)z",
    r"\Aa",
    r"b\Z",
    "a++b",
    "(?>a+)b",
    r"a\Kb",
    r"\n",
    r"[\s\S]b",
    r"\W+$",
    r"(a|b)\1",
    r"^\s*$",
    "a{2}",
    "a{e<=1}b",
]
TEXTS = [
    "",
    "\n",
    "\n\n",
    "ab\n\nx\nz\nfoo bar\nfoobar\n",
    "a\nb",
    "x\nxz",
    "trailing  \n  \nok",
    "aab\nbab\naa\nbb\n",
    "foo\nbar\n",
    "b\na\n",
]


def reference(pattern: str, text: str) -> list[tuple[int, str]]:
    """grep's answer: each line, without its ending, matched on its own."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if not text:
        lines = []
    return [(n, line) for n, line in enumerate(lines, start=1) if regex.search(pattern, line)]


@pytest.mark.parametrize(("pattern", "text"), list(itertools.product(PATTERNS, TEXTS)))
def test_whole_text_search_finds_exactly_the_matching_lines(pattern: str, text: str) -> None:
    assert list(LineMatcher(pattern).matching_lines(text)) == reference(pattern, text)


@pytest.mark.parametrize("pattern", [r"def \w+", "(?i)todo", r"\s+$", r"^import (os|sys)\b"])
def test_common_patterns_search_the_whole_text_at_once(pattern: str) -> None:
    assert LineMatcher(pattern)._whole is not None


@pytest.mark.parametrize("pattern", ["foo(?=bar)", r"\Aa", "a++b", r"a\Kb", "a{e<=1}b", "(?x)a"])
def test_patterns_that_see_past_a_line_are_matched_line_by_line(pattern: str) -> None:
    assert LineMatcher(pattern)._whole is None


def test_an_invalid_pattern_raises_the_engine_error() -> None:
    with pytest.raises(regex.error, match=r"missing \)"):
        LineMatcher("(unclosed")
