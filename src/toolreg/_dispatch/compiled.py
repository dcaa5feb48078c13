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

Not used when ``TOOLREG_NO_EXTENSIONS`` is set (to anything but empty or ``0``), on a
free-threaded build (the C code relies on the GIL), off CPython, or when the
installed module's ``ABI`` is not the one this toolreg was written for.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._schemas.check_programs import Program
from .call_outcomes import failed, internal, off_contract

if TYPE_CHECKING:
    from .dispatch import Dispatcher
    from .dispatch_plan import Plan

logger = logging.getLogger("toolreg.dispatch")

#: The ``ABI`` of toolreg_speedups._hot this code calls: its constructor's
#: arguments and the layout of the hot tuple (``dispatch_plan.Hot``).
ABI = 2
#: Set (to anything but empty or ``0``, like TOOLREG_DISABLE_PLUGIN_AUTOLOAD) to keep
#: dispatch in Python with toolreg-speedups installed.
DISABLE_ENV = "TOOLREG_NO_EXTENSIONS"
#: Compiled checks kept per dispatcher; emptied when full.
CHECKS_CACHE_SIZE = 512


def finish(plan: Plan, result: Any) -> str | dict[str, Any]:
    """A hot handler's result other than a str within the limit."""
    return off_contract(plan.entry, result)


def compiled_dispatch(dispatcher: Dispatcher) -> Callable[..., Any] | None:
    """The compiled ``dispatch`` over ``dispatcher``; None when it cannot or may not be used."""
    if os.environ.get(DISABLE_ENV, "") not in ("", "0") or sys.implementation.name != "cpython":
        return None
    if not getattr(sys, "_is_gil_enabled", lambda: True)():
        return None
    try:
        from toolreg_speedups import _hot
    except ImportError:
        return None
    if getattr(_hot, "ABI", None) != ABI:
        logger.warning(
            "toolreg-speedups is installed but built for another toolreg (ABI %r, not %r): "
            "dispatch stays in Python; install the matching version",
            getattr(_hot, "ABI", None),
            ABI,
        )
        return None
    dispatcher.set_checks_compiler(checks_compiler(_hot.Checks))
    return _hot.HotDispatch(dispatcher.hot, dispatcher.dispatch, failed, finish, internal)  # type: ignore[no-any-return]


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
