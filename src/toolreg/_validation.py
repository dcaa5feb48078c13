"""Argument validation: check a call's arguments against the tool's schema first.

Models get arguments wrong: a missing field, a string for a number, a
made-up option. Catching that before the handler runs, with a message that
names the field and the rule, lets the model correct itself on the next turn
instead of the handler failing somewhere deep inside.

Validators are compiled with fastjsonschema (JSON Schema compiled to Python
code), once per registered entry, on first use.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import fastjsonschema

from ._entry import ToolEntry
from ._results import describe_exception, tool_error
from ._schema_limits import check_validatable
from ._schemas import parameters_of

logger = logging.getLogger("toolreg.validation")

#: Returns None when the arguments are fine, else the tool_error for the model.
Checker = Callable[[Any], "str | None"]

TOO_DEEP = "the arguments are nested too deeply. Send a flatter JSON object."


def invalid_arguments(tool: str, problem: str) -> str:
    """The tool_error for arguments a tool cannot take, whoever found the problem."""
    return tool_error(
        f"Invalid arguments for tool {tool!r}: {problem}",
        error_type="invalid_arguments",
        tool=tool,
    )


def compile_checker(entry: ToolEntry) -> Checker | None:
    """A checker for the entry's parameters; None if its schema cannot be compiled."""
    schema = parameters_of(entry.schema)
    if set(schema) <= {"type", "properties", "description", "title"} and not schema["properties"]:
        return None  # accepts any object; dispatch's own dict check covers it
    try:
        # Checked at registration too; again here because the registry keeps the
        # caller's dict, and a remote $ref would be fetched by the compiler.
        check_validatable(entry.name, schema)
        # use_default=False: validation must never write defaults into the
        # caller's dict behind its back.
        validate = fastjsonschema.compile(schema, use_default=False)
    except Exception as exc:  # a schema fastjsonschema cannot handle: do not block calls
        logger.warning(
            "Tool %s: arguments will not be validated, its schema does not compile: %s",
            entry.name,
            exc,
        )
        return None
    name = entry.name

    def check(args: Any) -> str | None:
        try:
            validate(args)
            return None
        except fastjsonschema.JsonSchemaValueException as exc:
            problem = exc
        except RecursionError:  # a recursive schema, and arguments nested deeper than Python goes
            return invalid_arguments(name, TOO_DEEP)
        except Exception as exc:  # arguments the validator itself chokes on (odd subclasses)
            return invalid_arguments(
                name, f"the arguments could not be checked ({describe_exception(exc)})"
            )
        try:
            return invalid_arguments(name, explain(problem))
        except Exception:  # explaining reads the arguments again; they may still misbehave
            return invalid_arguments(name, f"they break JSON Schema rule {problem.rule!r}")

    return check


def explain(exc: fastjsonschema.JsonSchemaValueException) -> str:
    """Say what is wrong where, and which rule, in words a model can act on."""
    path = _field_path(exc.path or [])
    detail = _detail(exc)
    where = f"argument {path!r}" if path else "the arguments object"
    return (
        f"{where} {detail} (JSON Schema rule {exc.rule!r}). "
        "Fix the arguments and call the tool again."
    )


def _detail(exc: fastjsonschema.JsonSchemaValueException) -> str:
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
