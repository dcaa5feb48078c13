"""Which lines of a text match a pattern, as grep answers it, within a time budget.

Each line is matched on its own, without its line ending. Every bounded match
pays a fixed set-up cost (the engine reads the CPU clock), so matching a file
line by line costs several times what one search of the whole text does. The
whole-text search (``^`` and ``$`` at line ends) finds every line that matches
on its own, as long as the pattern cannot see past a line's ends or commit to a
choice there: no lookaround, no ``\\A``, ``\\Z``, ``\\G`` or ``\\K``, no atomic
group, possessive quantifier, fuzzy constraint or inline flag other than one
leading ``(?aimsu)``. For such a pattern each line the whole-text search lands
on is then confirmed on its own; any other pattern is matched line by line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from toolreg._schemas.bounded_regex import BoundedPattern

_LEADING_FLAGS = re.compile(r"\(\?[aimsu]+\)")
# Deliberately coarse: a false alarm only costs speed (e.g. an escaped "\(?").
_SEES_PAST_THE_LINE = re.compile(r"\(\?|\(\*|\\[AZzGK]|[+*?}]\+|\{[^\d,}]")


class LineMatcher:
    """A pattern compiled for line-by-line matching; ``regex.error`` if it does not compile."""

    __slots__ = ("_line", "_whole")

    def __init__(self, pattern: str) -> None:
        import regex  # loaded by the first search, not when the tools register

        self._line = BoundedPattern(pattern)
        flags = _LEADING_FLAGS.match(pattern)
        body = pattern[flags.end() :] if flags else pattern
        self._whole = (
            None if _SEES_PAST_THE_LINE.search(body) else BoundedPattern(pattern, regex.MULTILINE)
        )

    def matching_lines(self, text: str) -> Iterator[tuple[int, str]]:
        """(1-based number, line) for each line of ``text`` ('\\n'-separated) that matches."""
        if not text:
            return
        if self._whole is None:
            lines = text.split("\n")
            if text.endswith("\n"):
                lines.pop()
            for number, line in enumerate(lines, start=1):
                if self._line.search(line):
                    yield number, line
            return
        yield from self._by_whole_text(text, self._whole)

    def _by_whole_text(self, text: str, whole: BoundedPattern) -> Iterator[tuple[int, str]]:
        end = len(text)
        pos, number = 0, 1  # pos is always the start of line `number`
        while pos < end:
            found = whole.search(text, pos)
            if found is None:
                return
            hit = found.start()
            if hit > pos:
                newlines = text.count("\n", pos, hit)
                if newlines:
                    number += newlines
                    pos = text.rindex("\n", pos, hit) + 1
            if pos >= end:
                return  # an empty match after the final line ending is on no line
            line_end = text.find("\n", hit)
            if line_end < 0:
                line_end = end
            line = text[pos:line_end]
            # A match that stays inside the line is the line's own; one that runs on
            # into the next line is not, unless the line matches by itself too.
            if found.end() <= line_end or self._line.search(line):
                yield number, line
            pos, number = line_end + 1, number + 1
