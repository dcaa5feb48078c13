"""A tool's fast call: its argument checks and its handler call in one generated function.

It answers a plain call exactly as the general path does: arguments it does not
certainly accept go to ``rejected`` (the full validator), a handler's exception to
``failed``, any result but a str within the limit to ``finish``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._contract.entry import Handler, ToolEntry
from .._schemas.simple_schemas import REJECT, SchemaChecks, compiled_maker, indented
from .call_outcomes import failed, off_contract

#: ``call(args)``: the tool's answer, as ``dispatch`` gives it.
FastCall = Callable[[Any], "str | dict[str, Any]"]

#: Only a dict: the checks of a tool that does not validate, or whose schema takes any object.
_ANY_OBJECT = (f"if type(d) is not dict: {REJECT}",)

#: Shapes of checks compiled and kept: a tool registered again, or another with
#: the same shape of schema, compiles nothing.
CACHE_SIZE = 512


def build_fast_call(
    entry: ToolEntry,
    handler: Handler,
    checks: SchemaChecks | None,
    rejected: Callable[[Any], str | dict[str, Any]],
) -> FastCall | None:
    """The fast call of ``entry``, calling ``handler``; None when Python cannot compile
    its checks.

    ``checks`` None means any dict is accepted. ``rejected`` must never raise
    (but ``KeyboardInterrupt``): it is called inside the checks' own guard.
    """
    lines, values = (_ANY_OBJECT, ()) if checks is None else checks
    limit = entry.max_result_size_chars
    make = _maker(lines, len(values), limit is not None)
    if make is None:
        return None
    finish = functools.partial(off_contract, entry)
    return make(handler, rejected, finish, failed, entry.name, limit, *values)  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=CACHE_SIZE)
def _maker(lines: tuple[str, ...], count: int, limited: bool) -> Callable[..., Any] | None:
    # Compiled once per shape of checks and shared between tools: the values (field
    # names, types, bounds, the handler) are arguments of ``make``, never source text.
    names = "".join(f", c{i}" for i in range(count))
    # A str within the limit is the one answer the fast call gives itself.
    short = "type(result) is str and len(result) <= limit" if limited else "type(result) is str"
    source = "\n".join(
        [
            f"def make(handler, rejected, finish, failed, name, limit{names}):",
            "    def call(d):",
            "        try:",
            *indented(lines, 3),
            "        except Exception:",  # a missing required field, a key whose __eq__ raises
            "            return rejected(d)",
            "        try:",
            "            result = handler(d)",
            "        except KeyboardInterrupt:",
            "            raise",  # Ctrl-C, on the caller's own thread
            "        except BaseException as exc:",
            "            return failed(name, exc)",
            f"        if {short}:",
            "            return result",
            "        return finish(result)",
            "    return call",
        ]
    )
    return compiled_maker(source, "fast call")
