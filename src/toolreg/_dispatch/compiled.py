"""The compiled hot path: ``registry.dispatch`` in C when toolreg-speedups is installed.

``toolreg-core[speedups]`` installs one C type, ``HotDispatch``. Made over a
dispatcher, it reads the dispatcher's own hot table (the same dict, which
every write clears or trims) and settles a plain call of a hot tool itself:
an exact ``str`` name, a ``dict`` of arguments, no keyword arguments. It
calls the tool's fast call, or the handler of a tool that takes any dict,
and returns a str within the limit. For a tool whose schema is among the
commonest shapes (``check_programs``) it first runs the schema's checks
itself, compiled from the tool's check program (``Checks``): arguments they
certainly accept go straight to the handler, any others to the fast call,
which gives the verdict. Every other call goes to the Python
``Dispatcher.dispatch`` before anything has run; a handler's exception, an
odd result and anything that escapes go to the same Python functions the
Python path calls. So the answers are the same; only the interpreter's price
of one Python frame per call is gone.

Whether the module may be used at all (``TOOLREG_NO_EXTENSIONS``, CPython,
the GIL, its ``ABI``) is ``toolreg/_extension.py``'s to say.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._extension import compiled_module
from .._schemas.check_programs import Program
from .call_outcomes import failed, internal, off_contract

if TYPE_CHECKING:
    from .dispatch import Dispatcher
    from .dispatch_plan import Plan

logger = logging.getLogger("toolreg.dispatch")

#: Compiled checks kept per dispatcher; emptied when full.
CHECKS_CACHE_SIZE = 512


def finish(plan: Plan, result: Any) -> str | dict[str, Any]:
    """A hot handler's result other than a str within the limit."""
    return off_contract(plan.entry, result)


def compiled_dispatch(dispatcher: Dispatcher) -> Callable[..., Any] | None:
    """The compiled ``dispatch`` over ``dispatcher``; None when it cannot or may not be used."""
    hot = compiled_module()
    if hot is None:
        return None
    dispatcher.set_checks_compiler(checks_compiler(hot.Checks))
    return hot.HotDispatch(dispatcher.hot, dispatcher.dispatch, failed, finish, internal)


def checks_compiler(compile_program: Callable[[Program], Any]) -> Callable[[Program], Any]:
    """``compile_program``, once per program: a tool registered again with an equal
    schema gets the same program (validation caches it with the compiled schema)."""
    # By identity, each program kept beside its checks so its id is not reused.
    made: dict[int, tuple[Program, Any]] = {}

    def compiled_checks(program: Program) -> Any:
        found = made.get(id(program))
        if found is not None:
            return found[1]
        try:
            checks = compile_program(program)
        except Exception:  # a program the C code refuses (a bug): the fast call alone checks
            logger.exception("toolreg-speedups could not compile a check program: %r", program)
            return None
        if len(made) >= CHECKS_CACHE_SIZE:
            made.clear()
        made[id(program)] = (program, checks)
        return checks

    return compiled_checks
