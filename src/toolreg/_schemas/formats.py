"""Provider shapes for a tool definition, and the options that reshape them.

Each formatter returns the definition frozen, sharing nothing with its input (never
mutated), or a ValueError naming the tool and the rule; the shapes: docs/formats.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from .._contract.frozen import FrozenDict, freeze
from .._contract.names import ANTHROPIC_NAME, GEMINI_NAME, MCP_NAME, OPENAI_NAME, NameRule

if TYPE_CHECKING:
    from .._contract.entry import ToolEntry


class Formatter(Protocol):
    """``(name, description, parameters, entry=None)`` -> the provider's definition."""

    def __call__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        entry: ToolEntry | None = None,
    ) -> dict[str, Any]: ...


class Unrepresentable(ValueError):
    """A schema a format's option cannot express without changing what the tool accepts.

    ``get_definitions`` leaves such a tool out, with a warning, rather than send
    it without the option; ``get_definition`` raises it.
    """


class NotStrict(Unrepresentable):
    """A schema strict mode cannot express without changing what the tool accepts."""


class NotInlinable(Unrepresentable):
    """A schema whose ``$ref``s cannot all be inlined (recursive, remote, missing, too big)."""


def _check(name: str, parameters: dict[str, Any], rule: NameRule, provider: str) -> None:
    """Raise ValueError, naming the tool, unless ``provider`` takes the name and
    ``parameters`` is an object schema (every provider wants one)."""
    pattern, text = rule
    if not isinstance(name, str) or not pattern.fullmatch(name):
        raise ValueError(f"Tool {name!r} cannot be defined for {provider}: names must be {text}")
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        raise ValueError(f'Tool {name!r}: parameters must be a JSON-Schema with "type": "object"')


def _object_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """The checked ``parameters``, with ``properties`` always present (not yet copied)."""
    if "properties" in parameters:
        return parameters
    return {**parameters, "properties": {}}


def _frozen(name: str, definition: dict[str, Any]) -> FrozenDict:
    """``definition`` frozen, which copies it; ValueError naming the tool if it is not JSON."""
    # The registry hands this one object to every caller: building it is the only copy.
    try:
        return freeze(definition)
    except TypeError as exc:
        raise ValueError(f"Tool {name!r}: its definition is not JSON: {exc}") from None


def _openai(
    name: str, description: str, parameters: dict[str, Any], entry: ToolEntry | None = None
) -> dict[str, Any]:
    _check(name, parameters, OPENAI_NAME, "OpenAI")
    return _frozen(
        name,
        {
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": _object_schema(parameters),
            },
        },
    )


def _openai_responses(
    name: str, description: str, parameters: dict[str, Any], entry: ToolEntry | None = None
) -> dict[str, Any]:
    _check(name, parameters, OPENAI_NAME, "OpenAI")
    # The Responses API defaults strict to true, and strict mode rejects any
    # schema without additionalProperties: false and every property required,
    # which ordinary tool schemas are not. Opting out keeps them accepted.
    return _responses_tool(name, description, _object_schema(parameters), strict=False)


def _responses_tool(
    name: str, description: str, schema: dict[str, Any], *, strict: bool
) -> dict[str, Any]:
    return _frozen(
        name,
        {
            "type": "function",
            "name": name,
            "description": description,
            "parameters": schema,
            "strict": strict,
        },
    )


def _anthropic(
    name: str, description: str, parameters: dict[str, Any], entry: ToolEntry | None = None
) -> dict[str, Any]:
    _check(name, parameters, ANTHROPIC_NAME, "Anthropic")
    return _frozen(
        name, {"name": name, "description": description, "input_schema": _object_schema(parameters)}
    )


def _openai_strict(
    name: str, description: str, parameters: dict[str, Any], entry: ToolEntry | None = None
) -> dict[str, Any]:
    _check(name, parameters, OPENAI_NAME, "OpenAI")
    function = {"name": name, "description": description, "parameters": _strict(name, parameters)}
    return _frozen(name, {"type": "function", "function": {**function, "strict": True}})


def _openai_responses_strict(
    name: str, description: str, parameters: dict[str, Any], entry: ToolEntry | None = None
) -> dict[str, Any]:
    _check(name, parameters, OPENAI_NAME, "OpenAI")
    return _responses_tool(name, description, _strict(name, parameters), strict=True)


def _strict(name: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """The strict-mode form of ``parameters``; NotStrict naming the tool and the reason."""
    from .strict_schema import strict_schema  # loaded only by strict hosts

    try:
        return strict_schema(_object_schema(parameters))[0]
    except NotStrict as exc:
        raise NotStrict(f"Tool {name!r} cannot be made strict: {exc}") from None


def _gemini(
    name: str, description: str, parameters: dict[str, Any], entry: ToolEntry | None = None
) -> dict[str, Any]:
    from .gemini_schema import to_gemini_schema  # loaded only by hosts that ask for Gemini

    _check(name, parameters, GEMINI_NAME, "Gemini")
    schema = to_gemini_schema(parameters)  # builds new dicts and lists throughout
    declaration: dict[str, Any] = {"name": name, "description": description}
    # A function without parameters leaves them unset: an object schema with no
    # properties is answered with 400 "properties: should be non-empty for OBJECT type".
    if schema.get("properties"):
        declaration["parameters"] = schema
    return _frozen(name, declaration)


def _gemini_json_schema(
    name: str, description: str, parameters: dict[str, Any], entry: ToolEntry | None = None
) -> dict[str, Any]:
    _check(name, parameters, GEMINI_NAME, "Gemini")
    declaration: dict[str, Any] = {"name": name, "description": description}
    # Left out without properties, as in the gemini format: a function without
    # parameters leaves them unset.
    if parameters.get("properties"):
        declaration["parameters_json_schema"] = parameters
    return _frozen(name, declaration)


def _mcp(
    name: str, description: str, parameters: dict[str, Any], entry: ToolEntry | None = None
) -> dict[str, Any]:
    _check(name, parameters, MCP_NAME, "MCP")
    definition = {
        "name": name,
        "description": description,
        "inputSchema": _object_schema(parameters),
    }
    if entry is not None:
        if entry.annotations:
            definition["annotations"] = dict(entry.annotations)
        if entry.output_schema is not None:
            definition["outputSchema"] = entry.output_schema  # frozen below, which copies it
    return _frozen(name, definition)


FORMATS: dict[str, Formatter] = {
    "openai": _openai,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "gemini-json-schema": _gemini_json_schema,
    "mcp": _mcp,
}


#: The strict forms of the formats OpenAI's strict mode applies to.
_STRICT: dict[str, Formatter] = {
    "openai": _openai_strict,
    "openai-responses": _openai_responses_strict,
}
STRICT_FORMATS = tuple(_STRICT)

#: Formats whose parameters never hold a $ref: inline_refs changes nothing there.
_INLINED_ALREADY = frozenset({"gemini"})

FormatKey = str | tuple[str, ...]


def format_key(
    format: str,
    *,
    strict: bool = False,
    inline_refs: bool = False,
    optional_as_absent: bool = False,
) -> FormatKey:
    """The cache key of ``format`` with these options: the name itself when none is set,
    else ``(format, option, ...)`` with the options that change its output, in this order.

    ValueError for an unknown format or an option the format does not have.
    """
    get_formatter(format)
    if strict and format not in _STRICT:
        raise ValueError(
            f"strict=True is for the {' and '.join(STRICT_FORMATS)} formats; "
            f"{format!r} has no strict mode"
        )
    if strict and optional_as_absent:
        raise ValueError(
            "optional_as_absent=True cannot be combined with strict=True: strict mode "
            "needs every property required, an optional one nullable"
        )
    # Strict mode inlines every $ref itself, like the gemini format.
    inline_refs = inline_refs and not strict and format not in _INLINED_ALREADY
    options = [
        option
        for option, on in (
            ("strict", strict),
            ("inline_refs", inline_refs),
            ("optional_as_absent", optional_as_absent),
        )
        if on
    ]
    return (format, *options) if options else format


def get_formatter(format: FormatKey) -> Formatter:
    """The formatter for a format name or a key from :func:`format_key`."""
    name, options = (
        (format[0], format[1:]) if isinstance(format, tuple) and format else (format, ())
    )
    if not isinstance(name, str) or name not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise ValueError(f"Unknown definition format {format!r}; expected one of: {known}")
    if not options:
        return FORMATS[name]
    if not set(options) <= _OPTIONS or ("strict" in options and name not in _STRICT):
        raise ValueError(f"Unknown options in definition format {format!r}")
    if options == ("strict",):
        return _STRICT[name]
    return _Rewriting(name, options)


_OPTIONS = frozenset({"strict", "inline_refs", "optional_as_absent"})


class _Rewriting:
    """A format's formatter, given parameters rewritten by the options first."""

    __slots__ = ("name", "options")

    def __init__(self, name: str, options: tuple[str, ...]) -> None:
        self.name = name
        self.options = options

    def __call__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        entry: ToolEntry | None = None,
    ) -> dict[str, Any]:
        if isinstance(parameters, dict):  # else the format's own check names the problem
            if "inline_refs" in self.options:
                from .inline_refs import inline_refs  # loaded only by hosts that ask for it

                try:
                    parameters = inline_refs(parameters)
                except NotInlinable as exc:
                    raise NotInlinable(
                        f"Tool {name!r} cannot have its $refs inlined: {exc}"
                    ) from None
            if "optional_as_absent" in self.options:
                from .optional_absent import optional_as_absent

                parameters = optional_as_absent(parameters)
        # Looked up on every call, like the plain formats.
        formatter = _STRICT[self.name] if "strict" in self.options else FORMATS[self.name]
        return formatter(name, description, parameters, entry)
