"""``toolreg call``'s answer to an ``ask`` rule: a y/N prompt on the terminal, or ``--yes``.

The prompt shows the tool, its arguments and the rule that asked. The arguments
are the model's words, so they are shown bounded (a long value is cut, a long
listing is cut, each with a note saying so) and escaped: a control character, an
ANSI escape, a bidirectional override reaches the terminal as ``\\u001b`` and the
like, never raw, so an argument cannot rewrite the prompt line or hide from it.
"""

from __future__ import annotations

import json
import os
import sys
from typing import IO, Any

from toolreg import registry
from toolreg._contract.escaping import escape, shorten

#: A string value (or key) longer than this is cut, with a note.
MAX_VALUE_CHARS = 300
#: At most this many lines of arguments are shown, with a note for the rest.
MAX_LINES = 40


class Terminal:
    """Where the prompt is written and the answer read: ``/dev/tty``, or stdin when it is one."""

    def __init__(self, reader: IO[str], writer: IO[str], owned: bool) -> None:
        self.reader = reader
        self.writer = writer
        self._owned = owned

    def close(self) -> None:
        if self._owned:
            self.reader.close()
            self.writer.close()


def open_terminal() -> Terminal | None:
    """The controlling terminal, or None when the process has none (a pipe, a service)."""
    try:
        fd = os.open("/dev/tty", os.O_RDWR | getattr(os, "O_NOCTTY", 0))
    except OSError:
        fd = -1
    if fd >= 0:
        # A terminal is not seekable: one text stream each way, not one "r+".
        reader = open(fd, encoding="utf-8", errors="replace")  # noqa: SIM115
        writer = open(os.dup(fd), "w", encoding="utf-8", errors="replace")  # noqa: SIM115
        return Terminal(reader, writer, owned=True)
    stdin = sys.stdin
    if stdin is not None and stdin.isatty():
        return Terminal(stdin, sys.stderr, owned=False)
    return None


def show_arguments(arguments: Any) -> list[str]:
    """The arguments as pretty JSON, bounded and escaped, with notes on what was cut."""
    cut = [0]
    try:
        text = json.dumps(
            shorten(arguments, MAX_VALUE_CHARS, cut), indent=2, ensure_ascii=False, default=repr
        )
    except (TypeError, ValueError, RecursionError):
        text = repr(arguments)
    lines = escape(text).splitlines() or ["{}"]
    notes = []
    if cut[0]:
        notes.append(f"({cut[0]} value(s) longer than {MAX_VALUE_CHARS} characters cut)")
    if len(lines) > MAX_LINES:
        notes.append(f"({len(lines) - MAX_LINES} more line(s) of arguments not shown)")
        lines = lines[:MAX_LINES]
    return lines + notes


def _where(rule: str | None) -> str:
    """``permissions.ask[1]`` for the rule as written (the first rule with that text)."""
    permissions = registry.permissions
    if rule is None:
        return "permissions.default"
    for written in permissions.all_rules() if permissions is not None else ():
        if written.level == "ask" and written.text == rule:
            return written.where
    return "permissions"


def prompt_text(name: str, arguments: Any, rule: str | None) -> str:
    """What the terminal shows before it reads y/N."""
    asked = (
        f"rule {escape(repr(rule))} ({_where(rule)})"
        if rule is not None
        else 'the default ("ask", permissions.default)'
    )
    lines = [
        f"toolreg: tool {escape(name)} needs approval: the operator's {asked} asks.",
        "arguments:",
        *("  " + line for line in show_arguments(arguments)),
        f"Run {escape(name)}? [y/N] ",
    ]
    return "\n".join(lines)


class TerminalApprover:
    """Asks on ``terminal`` for each call an ``ask`` rule puts to it."""

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal

    def __call__(self, name: str, arguments: dict[str, Any], rule: str | None) -> Any:
        writer = self.terminal.writer
        writer.write(prompt_text(name, arguments, rule))
        writer.flush()
        answer = self.terminal.reader.readline()
        if not answer:  # end of input: nobody said yes
            writer.write("\n")
            writer.flush()
            return ("deny", "no answer at the terminal's prompt")
        if answer.strip().lower() in ("y", "yes"):
            return "allow"
        return ("deny", "the operator answered no at the terminal's prompt")


def approve_all(name: str, arguments: dict[str, Any], rule: str | None) -> str:
    """``--yes``: every ask is allowed (a deny never reaches an approver), and said on stderr."""
    which = f"rule {rule!r}" if rule is not None else "the default"
    print(f"toolreg: note: --yes approves {escape(name)} ({escape(which)} asks)", file=sys.stderr)
    return "allow"
