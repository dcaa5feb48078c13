"""The operator's call-time permissions: ``deny``, ``ask`` and ``allow`` rules, and a default.

Pure: rules in, a verdict out. A rule is a tool-name glob (or ``toolset:GLOB``,
``pack:GLOB``), optionally followed by ``(arg=glob, ...)``; globs are
``fnmatch.fnmatchcase`` globs, anchored at both ends and case-sensitive. Deny
beats ask, ask beats allow, and a call no rule matches gets the default, or, under
``ask_unless_read_only``, an ask unless the tool's ``readOnlyHint`` is true and
comes from a source the operator trusts (``trust_hints``, plus ``builtin`` and
``host``).

What is worked out once per tool (:meth:`Permissions.for_tool`, the rules that
can match its name, toolset and pack) lives in the dispatcher's per-tool plan,
which every table write and every change of rules drops; the arguments are
matched on every call.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

if TYPE_CHECKING:
    from .._contract.entry import ToolEntry

Verdict = Literal["allow", "ask", "deny"]
#: The rule lists in the order they are consulted.
LEVELS: tuple[Verdict, ...] = ("deny", "ask", "allow")
VERDICTS = frozenset(LEVELS)
#: The keys of the ``[permissions]`` table.
KEYS = ("default", *LEVELS, "ask_unless_read_only", "trust_hints")
#: How records and tallies name the default, beside ``permissions.deny[0]`` and the like.
DEFAULT_WHERE = "permissions.default"
#: The scopes a rule may name instead of a tool: ``toolset:web``, ``pack:toolreg-sqlite``.
SCOPES = ("toolset", "pack")
# An argument name as a tool's schema has it: no spaces, no separators of this syntax.
_ARG_NAME = re.compile(r"[^\s=,()]+")
# Arguments are split at a comma that starts the next ``name=``: a glob may hold
# commas (a JSON list's) as long as no ``name=`` follows one.
_NEXT_ARG = re.compile(r",(?=\s*[^\s=,()]+=)")


class RuleError(ValueError):
    """A rule that cannot be read; ``where`` is ``permissions.deny[2]``, say."""

    def __init__(self, where: str, rule: Any, problem: str) -> None:
        self.where = where
        self.rule = rule
        self.problem = problem
        super().__init__(f"{where}: {rule!r}: {problem}")


def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(pattern))


def stringify(value: Any) -> str:
    """An argument's value as a rule's glob reads it: a str as is, anything else as
    compact JSON (``true``, ``3``, ``null``, ``["a","b"]``, keys sorted)."""
    if type(value) is str:
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError):
        return str(value)  # a value no JSON holds (validation off): its str


class Rule(NamedTuple):
    """One rule as the operator wrote it, compiled."""

    level: Verdict
    #: Its place in its level's list: ``permissions.<level>[<position>]``.
    position: int
    text: str
    #: ``tool``, ``toolset`` or ``pack``: what the first glob is matched against.
    scope: str
    glob: str
    matcher: re.Pattern[str]
    #: ``(argument name, its glob, the compiled glob)``, in the order written.
    args: tuple[tuple[str, str, re.Pattern[str]], ...]
    #: ``permissions.<level>[<position>]``: how errors, records and tallies name it.
    where: str
    #: Why a rule the table derives (not one written) applies to the tool:
    #: ``ask_unless_read_only``'s "no readOnlyHint", say; "" for a written rule.
    why: str = ""

    def matches_args(self, args: Any) -> bool:
        """Whether every argument glob matches its argument; an absent one never does."""
        if type(args) is not dict:
            return False  # not an object (validation off): no argument to read
        for name, _, matcher in self.args:
            if name not in args or matcher.match(stringify(args[name])) is None:
                return False
        return True


def parse_rule(text: Any, level: Verdict, index: int) -> Rule:
    """Read one rule; RuleError naming ``permissions.<level>[<index>]`` when malformed."""
    where = f"permissions.{level}[{index}]"
    if type(text) is not str:
        raise RuleError(where, text, "a rule is a string")
    if not text or text != text.strip():
        raise RuleError(where, text, "a rule is a non-empty string without surrounding spaces")
    head, paren, rest = text.partition("(")
    arguments: tuple[tuple[str, str, re.Pattern[str]], ...] = ()
    if paren:
        if not rest.endswith(")"):
            raise RuleError(where, text, "the argument list must end the rule with ')'")
        arguments = _arguments(rest[:-1], where, text)
    elif ")" in text:
        raise RuleError(where, text, "')' without '('")
    scope, colon, glob = head.partition(":")
    if not colon:
        scope, glob = "tool", head
    elif scope not in SCOPES:
        raise RuleError(
            where, text, f"unknown scope {scope!r}: a rule names a tool, toolset:NAME or pack:ID"
        )
    if not glob or any(c.isspace() for c in glob):
        what = "tool name" if scope == "tool" else scope
        raise RuleError(where, text, f"expected a {what} glob without spaces, got {glob!r}")
    return Rule(level, index, text, scope, glob, _glob(glob), arguments, where)


def _arguments(inside: str, where: str, text: str) -> tuple[tuple[str, str, re.Pattern[str]], ...]:
    if not inside.strip():
        raise RuleError(where, text, "empty argument list: write arg=glob, or leave the () out")
    seen: set[str] = set()
    arguments = []
    for piece in _NEXT_ARG.split(inside):
        name, equals, glob = piece.lstrip().partition("=")
        name = name.rstrip()
        if not equals or not _ARG_NAME.fullmatch(name):
            raise RuleError(
                where, text, f"expected arg=glob in the argument list, got {piece.strip()!r}"
            )
        if name in seen:
            raise RuleError(where, text, f"argument {name!r} is named twice")
        seen.add(name)
        arguments.append((name, glob, _glob(glob)))
    return tuple(arguments)


#: The owners whose ``readOnlyHint`` is always trusted: the operator's own install.
TRUSTED_OWNERS = ("builtin", "host")
#: How records, tallies and messages name the ask ``ask_unless_read_only`` derives.
READ_ONLY_TEXT = "ask_unless_read_only"
READ_ONLY_WHERE = "permissions.ask_unless_read_only"
_ANY = re.compile(r"(?s:.*)\Z")


def read_only_rule(why: str) -> Rule:
    """The ask ``ask_unless_read_only`` puts after a tool's written rules, saying why."""
    return Rule("ask", 0, READ_ONLY_TEXT, "tool", "*", _ANY, (), READ_ONLY_WHERE, why)


def parse_trust(text: Any, index: int) -> str:
    """One ``trust_hints`` entry, an owner glob; RuleError naming ``permissions.trust_hints[i]``."""
    where = f"permissions.trust_hints[{index}]"
    if type(text) is not str or not text or any(c.isspace() for c in text):
        raise RuleError(where, text, "expected an owner glob without spaces, such as 'mcp:github'")
    if text.startswith("pack:"):
        raise RuleError(
            where,
            text,
            f"write the owner as registry.get_owner gives it, without 'pack:': {text[5:]!r}",
        )
    return text


class CallRuling(NamedTuple):
    """What the rules say of one call: the verdict and the rule that gave it (None: the default)."""

    verdict: Verdict
    rule: Rule | None


class _Group:
    """Consecutive rules that each test one same argument: one regex tells whether any
    of them matches, so a call that none decides costs one match, not one per rule."""

    __slots__ = ("name", "any", "rules")

    def __init__(self, name: str, combined: re.Pattern[str], rules: tuple[Rule, ...]) -> None:
        self.name = name
        self.any = combined
        self.rules = rules


def _steps(candidates: Sequence[Rule]) -> tuple[Rule | _Group, ...]:
    steps: list[Rule | _Group] = []
    run: list[Rule] = []

    def close() -> None:
        if len(run) > 1:
            combined = "|".join(f"(?:{rule.args[0][2].pattern})" for rule in run)
            try:
                steps.append(_Group(run[0].args[0][0], re.compile(combined), tuple(run)))
            except re.error:  # globs whose translations cannot share one pattern
                steps.extend(run)
        else:
            steps.extend(run)
        run.clear()

    for rule in candidates:
        if len(rule.args) == 1 and (not run or run[0].args[0][0] == rule.args[0][0]):
            run.append(rule)
            continue
        close()
        if len(rule.args) == 1:
            run.append(rule)
        else:
            steps.append(rule)
    close()
    return tuple(steps)


class ToolPermit:
    """The rules that can match one tool, in precedence order; consulted on every call."""

    __slots__ = ("candidates", "default", "_steps")

    def __init__(self, candidates: Sequence[Rule], default: Verdict) -> None:
        self.candidates = tuple(candidates)
        self.default = default
        self._steps = _steps(self.candidates)

    def deciding_rule(self, args: Any) -> Rule | None:
        """The rule that decides a call with ``args``; None when the default does."""
        for step in self._steps:
            if type(step) is _Group:
                if type(args) is not dict or step.name not in args:
                    continue
                value = args[step.name]
                text = value if type(value) is str else stringify(value)
                if step.any.match(text) is None:
                    continue
                for rule in step.rules:  # one does: the first of them decides
                    if rule.args[0][2].match(text) is not None:
                        return rule
                continue
            checks = step.args  # type: ignore[union-attr]
            if not checks:
                return step  # type: ignore[return-value]
            if type(args) is not dict:
                continue  # not an object (validation off): no argument to read
            # Rule.matches_args, inlined: this runs on every call.
            for name, _, matcher in checks:
                if name not in args:
                    break
                value = args[name]
                if matcher.match(value if type(value) is str else stringify(value)) is None:
                    break
            else:
                return step  # type: ignore[return-value]
        return None

    def decide(self, args: Any) -> CallRuling:
        rule = self.deciding_rule(args)
        return CallRuling(self.default if rule is None else rule.level, rule)


class _Level:
    """One level's rules, with its plain tool-name globs compiled into one regex."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = tuple(rules)
        plain = [r for r in rules if r.scope == "tool" and not r.args]
        # One alternation answers "does any plain rule match this name?"; only
        # then are the plain rules walked, to name the first that does.
        self.plain_any = re.compile("|".join(fnmatch.translate(r.glob) for r in plain) or "(?!)")
        self.plain = tuple(plain)


class Permissions:
    """The operator's ``[permissions]`` table, compiled: build it with :meth:`from_table`.

    Read-only once made: a change of rules is a new object, installed by the host.
    """

    __slots__ = ("_rules", "_levels", "_default", "_ask_unless_read_only", "_trust", "_trusted")

    def __init__(
        self,
        default: Verdict,
        rules: Mapping[Verdict, Sequence[Rule]],
        ask_unless_read_only: bool = False,
        trust_hints: Sequence[str] = (),
    ) -> None:
        if default not in VERDICTS:
            raise ValueError(f'default must be "allow", "ask" or "deny", got {default!r}')
        if ask_unless_read_only and default != "allow":
            raise ValueError(
                f'ask_unless_read_only = true needs default = "allow" (got {default!r}): it '
                "turns the allow of calls no rule matches into an ask, except for trusted "
                "read-only tools"
            )
        self._rules = MappingProxyType({level: tuple(rules.get(level, ())) for level in LEVELS})
        self._levels = tuple(_Level(self._rules[level]) for level in LEVELS)
        self._default: Verdict = default
        self._ask_unless_read_only = bool(ask_unless_read_only)
        self._trust = tuple(parse_trust(text, i) for i, text in enumerate(trust_hints))
        globs = (*TRUSTED_OWNERS, *self._trust)
        self._trusted = re.compile("|".join(fnmatch.translate(glob) for glob in globs))

    @property
    def ask_unless_read_only(self) -> bool:
        """Calls no rule matches ask, unless the tool is read-only by a trusted hint."""
        return self._ask_unless_read_only

    @property
    def trust_hints(self) -> tuple[str, ...]:
        """The owner globs whose ``readOnlyHint`` the operator trusts, as written
        (``builtin`` and ``host`` are trusted besides)."""
        return self._trust

    def trusts_hints_of(self, pack: str | None) -> bool:
        """Whether the owner ``pack``'s ``readOnlyHint`` may skip an ask."""
        return pack is not None and self._trusted.match(pack) is not None

    def read_only_why(self, pack: str | None, read_only: Any) -> str | None:
        """Why ``ask_unless_read_only`` asks for a tool of ``pack`` whose ``readOnlyHint``
        is ``read_only`` (None: absent), or None when it does not."""
        if not self._ask_unless_read_only:
            return None
        if read_only is not True:
            return "no readOnlyHint" if read_only is None else "readOnlyHint is not true"
        if not self.trusts_hints_of(pack):
            return f"readOnlyHint from an untrusted source, {pack or 'an unknown owner'}"
        return None

    @property
    def default(self) -> Verdict:
        return self._default

    @property
    def rules(self) -> Mapping[Verdict, tuple[Rule, ...]]:
        """Each level's rules, in the order written."""
        return self._rules

    @classmethod
    def from_table(cls, table: Mapping[str, Any]) -> Permissions:
        """From the TOML table's shape: ``{"default": ..., "deny": [...], ...}``.

        RuleError (a ValueError) names the first malformed rule; ValueError for
        an unknown key or a bad default.
        """
        unknown = set(table) - set(KEYS)
        if unknown:
            raise ValueError(f"unknown key(s) {sorted(unknown)}; expected {', '.join(KEYS)}")
        rules: dict[Verdict, list[Rule]] = {}
        for level in LEVELS:
            written = table.get(level, ())
            if isinstance(written, str) or not isinstance(written, Iterable):
                raise ValueError(f"permissions.{level} must be a list of rule strings")
            rules[level] = [parse_rule(text, level, i) for i, text in enumerate(written)]
        read_only = table.get("ask_unless_read_only", False)
        if type(read_only) is not bool:
            raise ValueError("permissions.ask_unless_read_only must be true or false")
        trust = table.get("trust_hints", ())
        if isinstance(trust, str) or not isinstance(trust, Iterable):
            raise ValueError("permissions.trust_hints must be a list of owner globs")
        return cls(table.get("default", "allow"), rules, read_only, tuple(trust))

    def all_rules(self) -> list[Rule]:
        """Every rule, in precedence order."""
        return [rule for level in LEVELS for rule in self.rules[level]]

    def for_tool(
        self, name: str, toolset: str, pack: str | None, read_only: Any = None
    ) -> ToolPermit:
        """The rules that can match calls of tool ``name`` of ``toolset``, made by ``pack``,
        whose ``readOnlyHint`` is ``read_only`` (None: it has none).

        Under ``ask_unless_read_only`` a tool it asks for gets :func:`read_only_rule`
        after its written rules: it decides the calls they leave to the default.
        """
        candidates = []
        for level in self._levels:
            plain = None
            if level.plain_any.match(name) is not None:
                plain = next(r for r in level.plain if r.matcher.match(name))
            for rule in level.rules:
                if rule is plain:
                    candidates.append(rule)
                    break  # it matches every call: nothing after it is reached
                if rule.scope == "tool" and not rule.args:
                    continue  # a plain rule that does not match this name
                subject = (
                    name if rule.scope == "tool" else toolset if rule.scope == "toolset" else pack
                )
                if subject is not None and rule.matcher.match(subject) is not None:
                    if not rule.args:
                        candidates.append(rule)
                        break
                    candidates.append(rule)
            else:
                continue
            break
        else:
            # No rule decides every call: the rest fall to the default, or to this ask.
            why = self.read_only_why(pack, read_only)
            if why is not None:
                candidates.append(read_only_rule(why))
        return ToolPermit(candidates, self._default)

    def decide(
        self, name: str, toolset: str, pack: str | None, args: Any, read_only: Any = None
    ) -> CallRuling:
        """The verdict on one call (``for_tool(...).decide(args)``)."""
        return self.for_tool(name, toolset, pack, read_only).decide(args)

    def for_entry(self, entry: ToolEntry, pack: str | None) -> ToolPermit:
        """``for_tool`` of a registered tool, owned by ``pack``: its ``readOnlyHint`` as
        registered (or, from an MCP server or an isolated pack, as received)."""
        return self.for_tool(entry.name, entry.toolset, pack, entry.annotations.get("readOnlyHint"))


class Explanation(NamedTuple):
    """Why the rules give one call the verdict they give (``toolreg permissions``).

    Worked out with the matcher dispatch uses (:meth:`Permissions.for_tool`, then
    :meth:`ToolPermit.deciding_rule`); the rest only describes what it found.
    """

    verdict: Verdict
    #: The rule that decides, or None when the default does.
    rule: Rule | None
    #: What the deciding rule's first glob matched: the tool's name, toolset or pack.
    subject: str | None
    #: The deciding rule's argument globs, each ``(name, glob, the value as matched)``.
    arguments: tuple[tuple[str, str, str], ...]
    #: Rules consulted before it that can match this tool but not these arguments, each
    #: ``(rule, the argument that failed, its value as matched)``: the value is None
    #: when the argument is absent, the argument None when the arguments are no object.
    passed_over: tuple[tuple[Rule, str | None, str | None], ...]


def explain(
    permissions: Permissions,
    name: str,
    toolset: str,
    pack: str | None,
    args: Any,
    read_only: Any = None,
) -> Explanation:
    """The verdict on a call of ``name`` with ``args``, the rule that gives it, and why.

    ``read_only`` is the tool's ``readOnlyHint`` (None: it has none), as dispatch reads it.
    """
    permit = permissions.for_tool(name, toolset, pack, read_only)
    rule = permit.deciding_rule(args)
    passed_over = []
    for candidate in permit.candidates:
        if candidate is rule:
            break
        passed_over.append((candidate, *_failing_argument(candidate, args)))
    if rule is None:
        return Explanation(permit.default, None, None, (), tuple(passed_over))
    subject = name if rule.scope == "tool" else toolset if rule.scope == "toolset" else pack
    matched = tuple((arg, glob, stringify(args[arg])) for arg, glob, _ in rule.args)
    return Explanation(rule.level, rule, subject, matched, tuple(passed_over))


def _failing_argument(rule: Rule, args: Any) -> tuple[str | None, str | None]:
    """The first argument of ``rule`` a call with ``args`` fails, and its value (None: absent)."""
    if type(args) is not dict:
        return None, None
    for arg, _, matcher in rule.args:
        if arg not in args:
            return arg, None
        value = stringify(args[arg])
        if matcher.match(value) is None:
            return arg, value
    return None, None  # not reached: a candidate that matches decides
