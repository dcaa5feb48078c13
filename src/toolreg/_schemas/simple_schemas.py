"""A quick yes for the arguments of simple schemas, before the full validator.

Most tool schemas are an object of plainly typed fields: strings, numbers,
booleans, enums, bounds, arrays of those, small nested objects. For such a
schema ``build_acceptor`` writes one straight-line Python function that says
True only when the arguments are certainly valid. Anything else, a rejection
included, is left to the full validator, which gives the verdict and the
message. So the acceptor may be stricter than the validator, never looser:

- it accepts only values of the exact JSON types (``dict``, ``list``,
  ``str``, ``int``, ``float``, ``bool``, ``None``); a subclass, a tuple, or
  ``1.0`` where an integer is asked for goes to the validator;
- a bool is never an integer or a number, and an enum member matches only a
  value of its own type;
- bounds are compared exactly as the validator compares them (``v < minimum``
  rejects), so NaN and huge integers come out alike; a bound or enum member
  that is infinite or NaN makes the schema not simple.

A schema with any keyword outside that list (``pattern``, ``format``,
``$ref``, ``anyOf``, ...), or a ``$schema`` naming draft-04, gets no
acceptor. No text from the schema is written into the generated source:
names and values reach it as arguments of the function that makes it.

The checks themselves (``schema_checks``) are statements over the argument
``d`` that end in ``return rejected(d)`` wherever the arguments are not
certainly valid, so dispatch can write them into a tool's own call function
(``_dispatch/fast_call.py``) instead of calling an acceptor.
"""

from __future__ import annotations

import hashlib
import linecache
import math
from collections.abc import Callable
from typing import Any, NamedTuple

#: True only when the arguments are certainly valid; False means "ask the validator".
Acceptor = Callable[[Any], bool]

#: What the generated checks do where the arguments are not certainly valid.
REJECT = "return rejected(d)"


class SchemaChecks(NamedTuple):
    """The checks of one simple schema, as source with no schema text in it."""

    #: Statements over ``d``, unindented; each refusal is ``REJECT``, and an
    #: exception (a missing required field, a key whose ``__eq__`` raises) is one too.
    lines: tuple[str, ...]
    #: The values the lines name ``c0``, ``c1``, ...: field names, types, bounds, enums.
    values: tuple[Any, ...]


#: Keywords that do not change what a schema accepts.
ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "$comment", "deprecated"}
    | {"readOnly", "writeOnly"}
)
_KEYWORDS = ANNOTATIONS | {"type", "enum", "const", "minLength", "maxLength", "items"}
_KEYWORDS |= {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
_KEYWORDS |= {"minItems", "maxItems", "properties", "required", "additionalProperties"}
_TOP_KEYWORDS = _KEYWORDS | {"$schema"}

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
    "array": (list,),
    "object": (dict,),
}
_ALL_TYPES = (str, int, float, bool, type(None), list, dict)
# The validator's own comparison for each bound: the value is rejected when it holds.
_BOUNDS = {
    "minimum": "<",
    "maximum": ">",
    "exclusiveMinimum": "<=",
    "exclusiveMaximum": ">=",
}
_LENGTHS = {"minLength": "<", "maxLength": ">"}
_ITEM_COUNTS = {"minItems": "<", "maxItems": ">"}
_NUMBER = (int, float)


class _NotSimple(Exception):
    """The schema uses something the acceptor does not check exactly."""


def is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def is_finite_number(value: Any) -> bool:
    # The validator writes each bound into its generated code with repr(), and
    # repr(inf) is no Python name: such a bound fails every number it meets.
    return type(value) is int or (type(value) is float and math.isfinite(value))


class _Writer:
    """Source lines, the values they name and fresh local names for one acceptor."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.values: list[Any] = []
        self.names: dict[int, str] = {}  # by id: the object itself, not an equal one
        self.locals = 0

    def const(self, value: Any) -> str:
        """One name per object, however often it is named (``values`` keeps ids unique)."""
        if id(value) not in self.names:
            self.values.append(value)
            self.names[id(value)] = f"c{len(self.values) - 1}"
        return self.names[id(value)]

    def local(self) -> str:
        self.locals += 1
        return f"v{self.locals}"

    def line(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)


def schema_checks(parameters: Any) -> SchemaChecks | None:
    """The checks of ``parameters``, or None when the schema is not simple."""
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        return None
    if not set(parameters) <= _TOP_KEYWORDS or not plain_dialect(parameters):
        return None
    writer = _Writer()
    try:
        writer.line(0, f"if type(d) is not dict: {REJECT}")
        _object_checks(writer, parameters, "d", 0, top=True)
    except _NotSimple:
        return None
    return SchemaChecks(tuple(writer.lines), tuple(writer.values))


def plain_dialect(parameters: dict[str, Any]) -> bool:
    """No ``$schema``, or one whose keywords mean what these checks take them to mean."""
    dialect = parameters.get("$schema", "")
    # draft-04 has no const, and its exclusiveMinimum is a flag: the validator reads it so too.
    return type(dialect) is str and "draft-04" not in dialect


def build_acceptor(parameters: Any) -> Acceptor | None:
    """The acceptor for ``parameters``, or None when the schema is not simple."""
    checks = schema_checks(parameters)
    return None if checks is None else acceptor_of(checks)


def acceptor_of(checks: SchemaChecks) -> Acceptor | None:
    """The checks as a function that says True or False; None if Python cannot compile them."""
    names = [f"c{i}" for i in range(len(checks.values))]
    source = "\n".join(
        [
            f"def make(rejected, {', '.join(names)}):",
            # Defaults, not closure cells: a local is the cheapest read there is.
            f"    def accept(d, rejected=rejected, {', '.join(f'{n}={n}' for n in names)}):",
            "        try:",
            *indented(checks.lines, 3),
            "            return True",
            "        except Exception:",  # a key whose __eq__ raises: the validator will say
            "            return False",
            "    return accept",
        ]
    )
    make = compiled_maker(source)
    return None if make is None else make(_refuse, *checks.values)


def _refuse(d: Any) -> bool:
    return False


def indented(lines: tuple[str, ...], levels: int) -> list[str]:
    return ["    " * levels + line for line in lines]


def compiled_maker(source: str, label: str = "simple schema") -> Callable[..., Any] | None:
    """The ``make`` function ``source`` defines; None when Python cannot compile it.

    The source is put in ``linecache`` under a name of its own, so a traceback
    through generated code shows its lines.
    """
    digest = hashlib.sha1(source.encode(), usedforsecurity=False).hexdigest()[:12]
    filename = f"<toolreg {label} {digest}>"
    namespace: dict[str, Any] = {}
    try:
        exec(compile(source, filename, "exec"), namespace)
    except (SyntaxError, RecursionError, MemoryError):  # too many nested loops for Python
        return None
    _remember_source(filename, source)
    return namespace["make"]  # type: ignore[no-any-return]


#: The generated sources toolreg put in linecache, oldest first; a bounded few.
_SOURCES: dict[str, None] = {}
_SOURCES_LIMIT = 1024


def _remember_source(filename: str, source: str) -> None:
    # mtime None: linecache.checkcache keeps the entry (there is no file to compare).
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    _SOURCES[filename] = None
    if len(_SOURCES) > _SOURCES_LIMIT:
        oldest = next(iter(_SOURCES))
        del _SOURCES[oldest]
        linecache.cache.pop(oldest, None)


def _object_checks(
    w: _Writer, schema: dict[str, Any], var: str, indent: int, *, top: bool = False
) -> None:
    """Checks for ``var``, already known to be a dict, against an object schema."""
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if type(properties) is not dict or any(type(k) is not str for k in properties):
        raise _NotSimple
    if type(required) is not list or any(type(k) is not str for k in required):
        raise _NotSimple
    if not set(required) <= properties.keys() or type(extra) is not bool:
        raise _NotSimple
    if extra is False and not properties:
        w.line(indent, f"if {var}: {REJECT}")
        return
    if extra is False and top:
        # As many keys as there are required fields (or properties), each of
        # them present: then there is no other key, and no key to count.
        needed = [name for name in properties if name in required]
        count = w.local()
        w.line(indent, f"{count} = len({var})")
        word = "if"
        for names in (needed, list(properties)) if len(needed) < len(properties) else (needed,):
            w.line(indent, f"{word} {count} == {len(names)}:")
            for name in names:
                _field_checks(w, properties[name], var, name, indent + 1)
            if not names:
                w.line(indent + 1, "pass")
            word = "elif"
        if len(properties) - len(needed) <= 1:
            w.line(indent, f"else: {REJECT}")  # no other count of keys can be valid
            return
        w.line(indent, "else:")
        indent += 1
    # additionalProperties: false holds when every key present is a known property.
    counter = w.local() if extra is False else None
    if counter is not None:
        w.line(indent, f"{counter} = {len(set(required))}")
    for name, sub in properties.items():
        if name in required:
            _field_checks(w, sub, var, name, indent)
            continue
        w.line(indent, f"if {w.const(name)} in {var}:")
        _field_checks(w, sub, var, name, indent + 1)
        if counter is not None:
            w.line(indent + 1, f"{counter} += 1")
    if counter is not None:
        w.line(indent, f"if len({var}) != {counter}: {REJECT}")


def _field_checks(w: _Writer, schema: Any, var: str, name: str, indent: int) -> None:
    """Read field ``name`` of ``var`` (a KeyError: not there, not accepted) and check it."""
    _value_checks(w, schema, w.local(), indent, source=f"{var}[{w.const(name)}]")


def _value_checks(
    w: _Writer, schema: Any, var: str, indent: int, source: str | None = None
) -> None:
    """Checks that ``var`` is of an accepted exact type and meets that type's rules.

    With ``source``, ``var`` is first bound to that expression, unless the
    checks read the value once: then they read ``source`` itself.
    """

    def value(read_again: bool) -> str:
        if source is None:
            return var
        if not read_again:
            return source
        w.line(indent, f"{var} = {source}")
        return var

    if schema is True or (type(schema) is dict and set(schema) <= ANNOTATIONS):
        w.line(indent, f"if type({value(False)}) not in {w.const(_ALL_TYPES)}: {REJECT}")
        return
    if type(schema) is not dict or not set(schema) <= _KEYWORDS:
        raise _NotSimple
    allowed = _allowed_types(schema)
    members = _enum_members(schema)
    if members is not None:
        allowed = tuple(t for t in allowed if members.get(t))
    if not allowed:
        raise _NotSimple
    checks = {kind: _type_checks(w, schema, kind, members) for kind in allowed}
    read = value(any(checks.values()))
    if len(allowed) == 1:
        (kind,) = allowed
        w.line(indent, f"if type({read}) is not {w.const(kind)}: {REJECT}")
        _emit(w, checks[kind], var, indent)
        return
    kind_var = w.local()
    w.line(indent, f"{kind_var} = type({read})")
    for position, kind in enumerate(allowed):
        word = "if" if position == 0 else "elif"
        w.line(indent, f"{word} {kind_var} is {w.const(kind)}:")
        if not checks[kind]:
            w.line(indent + 1, "pass")
        _emit(w, checks[kind], var, indent + 1)
    w.line(indent, f"else: {REJECT}")


def _allowed_types(schema: dict[str, Any]) -> tuple[type, ...]:
    if "type" not in schema:
        return _ALL_TYPES
    names = schema["type"]
    if type(names) is str:
        names = [names]
    if type(names) is not list or not names or any(type(n) is not str for n in names):
        raise _NotSimple
    kinds: list[type] = []
    for name in names:
        if name not in _JSON_TYPES:
            raise _NotSimple
        kinds += [k for k in _JSON_TYPES[name] if k not in kinds]
    return tuple(kinds)


def _enum_members(schema: dict[str, Any]) -> dict[type, frozenset[Any] | bool] | None:
    """Enum (or const) members by exact type; None when the schema has neither."""
    if "enum" in schema and "const" in schema:
        raise _NotSimple
    if "const" in schema:
        values = [schema["const"]]
    elif "enum" in schema:
        values = schema["enum"]
        if type(values) is not list or not values:
            raise _NotSimple
    else:
        return None
    members: dict[type, set[Any]] = {}
    for value in values:
        kind = type(value)
        if kind not in (str, int, float, bool, type(None)):
            raise _NotSimple  # arrays and objects compare by structure: the validator's job
        if kind is float and not math.isfinite(value):
            raise _NotSimple  # the validator's generated code cannot even name it
        # An int and a float are one number: 1 is in [1.0], as the validator has it.
        for shared in _NUMBER if kind in _NUMBER else (kind,):
            members.setdefault(shared, set()).add(value)
    return {
        kind: True if kind is type(None) else frozenset(found) for kind, found in members.items()
    }


def _type_checks(
    w: _Writer, schema: dict[str, Any], kind: type, members: dict[type, Any] | None
) -> list[Any]:
    """The rules of ``schema`` that apply to a value of exact type ``kind``, as line makers."""
    checks: list[Any] = []
    if members is not None and kind is not type(None):
        checks.append(("in", w.const(members[kind])))
    if kind is str:
        checks += _limits(w, schema, _LENGTHS, is_count, "len")
    elif kind in _NUMBER:
        checks += _limits(w, schema, _BOUNDS, is_finite_number, "cmp")
    elif kind is list:
        checks += _limits(w, schema, _ITEM_COUNTS, is_count, "len")
        if "items" in schema and schema["items"] is not True and schema["items"] != {}:
            checks.append(("items", schema["items"]))
    elif kind is dict and _has_object_rules(schema):
        checks.append(("object", schema))
    return checks


def _limits(
    w: _Writer,
    schema: dict[str, Any],
    limits: dict[str, str],
    valid: Callable[[Any], bool],
    form: str,
) -> list[Any]:
    """One check per limit keyword present; a limit of the wrong kind is not simple."""
    checks = []
    for keyword, op in limits.items():
        if keyword in schema:
            if not valid(schema[keyword]):
                raise _NotSimple
            checks.append((form, op, w.const(schema[keyword])))
    return checks


def _has_object_rules(schema: dict[str, Any]) -> bool:
    return "properties" in schema or "required" in schema or "additionalProperties" in schema


def _emit(w: _Writer, checks: list[Any], var: str, indent: int) -> None:
    for check in checks:
        if check[0] == "in":
            w.line(indent, f"if {var} not in {check[1]}: {REJECT}")
        elif check[0] == "len":
            w.line(indent, f"if len({var}) {check[1]} {check[2]}: {REJECT}")
        elif check[0] == "cmp":
            w.line(indent, f"if {var} {check[1]} {check[2]}: {REJECT}")
        elif check[0] == "items":
            item = w.local()
            w.line(indent, f"for {item} in {var}:")
            _value_checks(w, check[1], item, indent + 1)
        else:
            _object_checks(w, check[1], var, indent)
