"""Argument validation: check a call's arguments against the tool's schema first.

Models get arguments wrong: a missing field, a string for a number, a
made-up option. Catching that before the handler runs, with a message that
names the field and the rule, lets the model correct itself on the next turn
instead of the handler failing somewhere deep inside.

Validators are compiled with fastjsonschema (JSON Schema compiled to Python
code) on a tool's first call, and cached by the schema's JSON text: tools
that share a schema, and a tool registered again with the same one, reuse
the compiled validator. A simple schema also gets an acceptor
(``simple_schemas``) that says yes to valid arguments without running the
validator; a refusal is always the validator's. A schema comes from whoever
registered the tool (a pack, an upstream MCP server), so its regular
expressions (``pattern``, ``patternProperties``, the ``format`` checks) run
with a time budget, and it may not point at documents outside itself.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from .._contract.entry import ToolEntry
from .._contract.results import describe_exception, invalid_arguments
from .._contract.schema_checks import content_key, parameters_of
from .._contract.schema_limits import check_validatable
from .bounded_regex import BoundedPattern, RegexTimeout, time_budget
from .simple_schemas import Acceptor, SchemaChecks, acceptor_of, schema_checks

if TYPE_CHECKING:
    from fastjsonschema import JsonSchemaValueException

logger = logging.getLogger("toolreg.validation")

#: Returns None when the arguments are fine, else the tool_error for the model.
Checker = Callable[[Any], "str | None"]

TOO_DEEP = "the arguments are nested too deeply. Send a flatter JSON object."

#: What all the regular expressions of one call's validation may take together.
REGEX_SECONDS = 1.0

#: Compiled schemas kept for reuse, least recently used dropped first.
CACHE_SIZE = 512

#: The same compiled schemas by a cheaper key, ``content_key`` (about a quarter
#: of the JSON text's cost): the first dispatch after a tool is registered again
#: with an equal schema pays only that. Equal keys mean content equal type for
#: type, whose JSON text is then equal too, so a hit is the result the JSON key
#: would give; a miss takes the JSON key. Emptied when full.
_BY_ENCODING: dict[tuple[bytes, float, bool], _Compiled | str] = {}


class ArgumentCheck(NamedTuple):
    """How one tool's arguments are checked."""

    #: The verdict: None when the arguments are fine, else the tool_error for the model.
    check: Checker
    #: A quick True for arguments that are certainly fine (simple schemas only), else None.
    accepts: Acceptor | None
    #: The acceptor's checks as source, for dispatch to build a tool's call around.
    checks: SchemaChecks | None = None


class _Compiled(NamedTuple):
    """One schema compiled, shared by every tool registered with that schema."""

    validate: Callable[[Any], Any]
    bounded: bool  # its regular expressions run within a time budget
    accepts: Acceptor | None
    checks: SchemaChecks | None


def compile_checker(entry: ToolEntry) -> ArgumentCheck | None:
    """The argument check for the entry; None if its schema accepts any object or cannot compile."""
    schema = parameters_of(entry.schema)
    if set(schema) <= {"type", "properties", "description", "title"} and not schema["properties"]:
        return None  # accepts any object; dispatch's own dict check covers it
    compiled = compiled_schema(schema)
    if isinstance(compiled, str):
        _not_validated(entry.name, "arguments", compiled)
        return None
    return ArgumentCheck(_checker(entry.name, compiled), compiled.accepts, compiled.checks)


#: None when a structured result matches the output schema, else what is wrong with it.
ResultChecker = Callable[[Any], "str | None"]


def compile_result_checker(name: str, schema: dict[str, Any]) -> ResultChecker | None:
    """A checker for a tool's structured results; None if its output schema cannot compile.

    Like MCP clients, it reads ``format`` as a note, not a rule.
    """
    compiled = compiled_schema(schema, use_formats=False)
    if isinstance(compiled, str):
        _not_validated(name, "structured results", compiled)
        return None
    validate, bounded = compiled.validate, compiled.bounded
    from fastjsonschema import JsonSchemaValueException  # loaded by the compile already

    def check(value: Any) -> str | None:
        try:
            with time_budget(REGEX_SECONDS) if bounded else contextlib.nullcontext():
                validate(value)
            return None
        except JsonSchemaValueException as exc:
            path = _field_path(exc.path or [])
            where = f"field {path!r}" if path else "the result"
            return f"{where} {_detail(exc)} (JSON Schema rule {exc.rule!r})"
        except RegexTimeout as exc:
            return f"checking it against the pattern {exc.pattern!r} took over {exc.seconds:g} s"
        except RecursionError:
            return "it is nested too deeply to check"
        except Exception as exc:
            return f"it could not be checked ({describe_exception(exc)})"

    return check


def _not_validated(name: str, what: str, why: str) -> None:
    logger.warning(
        "Tool %s: %s will not be validated, its schema does not compile: %s", name, what, why
    )


def compiled_schema(schema: dict[str, Any], *, use_formats: bool = True) -> _Compiled | str:
    """The compiled schema, from the cache when the same schema was compiled before;
    or why it does not compile. ``use_formats=False`` reads ``format`` as a note."""
    key = content_key(schema)
    encoded = None if key is None else (key, REGEX_SECONDS, use_formats)
    if encoded is not None:
        found = _BY_ENCODING.get(encoded)
        if found is not None:
            return found
    try:
        # The key is the schema's JSON text, in the schema's own key order: that
        # order decides which field an error names first and how allowed fields
        # are listed, so two orders are two results.
        text = json.dumps(schema, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        # Not JSON (edited after registration): compiled as it is, uncached and
        # without an acceptor, which is only built for a plain copy.
        return _compile(schema, REGEX_SECONDS, use_formats, quick=False)
    compiled = _cached(text, REGEX_SECONDS, use_formats)
    if encoded is not None:
        if len(_BY_ENCODING) >= CACHE_SIZE:
            _BY_ENCODING.clear()
        _BY_ENCODING[encoded] = compiled
    return compiled


def clear_cache() -> None:
    """Forget every compiled schema (both keys)."""
    _BY_ENCODING.clear()
    _cached.cache_clear()


@functools.lru_cache(maxsize=CACHE_SIZE)
def _cached(text: str, regex_seconds: float, use_formats: bool) -> _Compiled | str:
    """Compile from the key itself, so what is compiled is exactly what is cached.

    A Python-only detail of a schema (a tuple, an int key, a str subclass) is
    read as its JSON, which is what providers and models see.
    """
    return _compile(json.loads(text), regex_seconds, use_formats, quick=True)


def _compile(
    schema: dict[str, Any], regex_seconds: float, use_formats: bool, *, quick: bool
) -> _Compiled | str:
    import fastjsonschema  # compiled on first use: a registry that never validates skips it

    try:
        # Checked at registration too; again here because the registry keeps the
        # caller's dict, and a remote $ref would be fetched by the compiler.
        _check_validatable(schema)
        _refuse_outside_refs(schema)
        _probe_compile_time_matches(schema, regex_seconds)
        # use_default=False: validation must never write defaults into the
        # caller's dict behind its back.
        options = {} if use_formats else {"use_formats": False}
        validate = fastjsonschema.compile(schema, use_default=False, **options)
        bounded = _bound_patterns(validate, schema)
    except Exception as exc:  # a schema fastjsonschema cannot handle: do not block calls
        return str(exc)
    checks = schema_checks(schema) if quick else None
    accepts = acceptor_of(checks) if checks is not None else None
    if accepts is None:
        return _Compiled(validate, bounded, None, None)
    return _Compiled(validate, bounded, accepts, checks)


def _check_validatable(schema: dict[str, Any]) -> None:
    """``check_validatable``, its message without a tool name: the result is shared."""
    try:
        check_validatable("", schema)
    except ValueError as exc:
        raise ValueError(str(exc).removeprefix("Tool '': ")) from None


def _checker(name: str, compiled: _Compiled) -> Checker:
    """The full check for tool ``name``: the verdict, and the message on a refusal."""
    from fastjsonschema import JsonSchemaValueException  # loaded by the compile already

    validate = compiled.validate

    def check(args: Any) -> str | None:
        try:
            validate(args)
            return None
        except JsonSchemaValueException as exc:
            problem = exc
        except RecursionError:  # a recursive schema, and arguments nested deeper than Python goes
            return invalid_arguments(name, TOO_DEEP)
        except RegexTimeout:
            raise  # the budget's own verdict, said below
        except Exception as exc:  # arguments the validator itself chokes on (odd subclasses)
            return invalid_arguments(
                name, f"the arguments could not be checked ({describe_exception(exc)})"
            )
        try:
            return invalid_arguments(name, explain(problem))
        except Exception:  # explaining reads the arguments again; they may still misbehave
            return invalid_arguments(name, f"they break JSON Schema rule {problem.rule!r}")

    if not compiled.bounded:
        return check  # no regular expression: no budget to open on every call

    def check_within_budget(args: Any) -> str | None:
        try:
            with time_budget(REGEX_SECONDS):
                return check(args)
        except RegexTimeout as exc:
            return invalid_arguments(
                name,
                f"checking a value against the schema's pattern {exc.pattern!r} took longer "
                f"than {exc.seconds:g} s, so the value was not accepted. Send a shorter or "
                "simpler value.",
            )

    return check_within_budget


def _subschemas(node: Any) -> Iterator[dict[str, Any]]:
    """Every dict inside a schema, the schema itself included."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _refuse_outside_refs(schema: dict[str, Any]) -> None:
    """fastjsonschema fetches a ``$ref`` URL (http:, file:, ...) as it compiles: never let it."""
    for node in _subschemas(schema):
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            raise ValueError(f"$ref {ref!r} points outside the schema; only '#...' is followed")


def _probe_compile_time_matches(schema: dict[str, Any], seconds: float) -> None:
    """Run, within a budget, the matches fastjsonschema's compiler makes with plain ``re``.

    With ``additionalProperties: false`` it checks each ``required`` name against
    each ``patternProperties`` key while compiling, where no budget applies.
    """
    with time_budget(seconds):
        for node in _subschemas(schema):
            keys, required = node.get("patternProperties"), node.get("required")
            if not (isinstance(keys, dict) and isinstance(required, list)):
                continue
            for key in keys:
                pattern = BoundedPattern(key)
                for field in required:
                    if isinstance(field, str):
                        try:
                            pattern.search(field)
                        except RegexTimeout:
                            raise ValueError(
                                f"patternProperties key {key!r} takes too long to match "
                                f"the required name {field!r}"
                            ) from None


_REGEX_KEYWORDS = ("pattern", "patternProperties", "format")


def _bound_patterns(validate: Callable[..., Any], schema: dict[str, Any]) -> bool:
    """Swap the validator's compiled ``re`` patterns for bounded ones; True if it has any.

    fastjsonschema keeps every pattern it compiled in the ``REGEX_PATTERNS`` dict
    of the generated function's globals and looks them up on each call.
    """
    patterns = getattr(validate, "__globals__", {}).get("REGEX_PATTERNS")
    if not isinstance(patterns, dict):
        if any(k in n for n in _subschemas(schema) for k in _REGEX_KEYWORDS):
            raise RuntimeError("this fastjsonschema keeps its patterns out of reach of a budget")
        return False
    for key, compiled in list(patterns.items()):
        # The key is the schema's own text; compiled.pattern has '$' rewritten as '\Z'.
        patterns[key] = BoundedPattern(compiled.pattern, compiled.flags, label=key)
    return bool(patterns)


def explain(exc: JsonSchemaValueException) -> str:
    """Say what is wrong where, and which rule, in words a model can act on."""
    path = _field_path(exc.path or [])
    detail = _detail(exc)
    where = f"argument {path!r}" if path else "the arguments object"
    return (
        f"{where} {detail} (JSON Schema rule {exc.rule!r}). "
        "Fix the arguments and call the tool again."
    )


def _detail(exc: JsonSchemaValueException) -> str:
    value, node = exc.value, exc.definition if isinstance(exc.definition, dict) else {}
    if exc.rule == "required" and isinstance(value, dict):
        missing = [f for f in exc.rule_definition or () if f not in value]
        return "is missing the required field(s) " + ", ".join(map(repr, missing))
    if exc.rule == "additionalProperties" and isinstance(value, dict):
        allowed = list(node.get("properties", {}))
        unknown = [f for f in value if f not in allowed]
        known = ", ".join(map(repr, allowed)) or "none"
        return f"has unknown field(s) {', '.join(map(repr, unknown))}; allowed fields: {known}"
    detail = exc.message
    # fastjsonschema writes "data.a.b must be ..."; the path is said separately.
    if exc.name and detail.startswith(exc.name):
        detail = detail[len(exc.name) :].strip()
    return detail


def _field_path(parts: list[Any]) -> str:
    """``['data', 'items', '2', 'name']`` -> ``items[2].name``."""
    out = ""
    for part in parts[1:]:
        text = str(part)
        if text.isdigit():
            out += f"[{text}]"
        else:
            out += f".{text}" if out else text
    return out


def parse_json_args(tool: str, text: str) -> tuple[Any, str | None]:
    """Arguments that arrive as a JSON string: (value, None) or (None, tool_error)."""
    try:
        return json.loads(text), None
    except ValueError as exc:
        return None, invalid_arguments(
            tool, f"not valid JSON ({exc}). Send the arguments as a JSON object."
        )
    except RecursionError:
        return None, invalid_arguments(tool, TOO_DEEP)
