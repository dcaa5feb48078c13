"""What dispatch works out once per tool (its plan), and the steps around a handler call.

The general path (parsing, validation, a deadline or an event loop, the result held
to the contract) for every call the fast path does not settle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .._contract.entry import Handler, ToolEntry
from .._contract.results import INTERRUPTS, type_name
from .._schemas.validation import ArgumentCheck, Checker, invalid_arguments, parse_json_args
from .async_bridge import run_coroutine
from .call_outcomes import call_failed, cap, internal, off_contract
from .fast_call import FastCall, build_fast_call
from .timeouts import call_with_deadline
from .workers import WorkerInterrupt

if TYPE_CHECKING:
    from .._core.permissions import ToolPermit
    from .permission_check import CallJudge


def parsed(name: str, args: Any) -> tuple[Any, str | None]:
    """Arguments as an object: JSON strings parsed, null as ``{}``, other mappings
    copied to a dict (what validation and handlers take); or a tool_error."""
    if isinstance(args, str):
        return parse_json_args(name, str.__str__(args))
    if args is None:
        args = {}  # "no arguments" arrives as null from some providers
    elif not isinstance(args, dict) and isinstance(args, Mapping):
        args = dict(args)
    return args, None


def checked(plan: Plan, args: Any) -> tuple[Any, str | None]:
    """Parse JSON-string arguments and validate them: (args, None) or (args, tool_error)."""
    name = plan.entry.name
    args, problem = parsed(name, args)
    if problem is not None:
        return args, problem
    if plan.check is not None:
        problem = plan.check(args)
        if problem is not None:
            return args, problem
    elif plan.validates and not isinstance(args, dict):
        return args, invalid_arguments(
            name, f"the arguments must be a JSON object, not {type_name(args)}"
        )
    return args, None


def quick_checker(argument_check: ArgumentCheck | None) -> Checker | None:
    """The tool's checker, asking the simple schema's acceptor first when it has one.

    The acceptor only ever says "certainly valid"; anything else, and every
    message, is the full validator's.
    """
    if argument_check is None:
        return None
    accepts, full = argument_check.accepts, argument_check.check
    if accepts is None:
        return full

    def check(args: Any) -> str | None:
        return None if accepts(args) else full(args)

    return check


class DispatchHooks(Protocol):
    """What the plugin layer plugs into dispatch (see ``toolreg.hookspecs``)."""

    def before(self, name: str, args: dict[str, Any]) -> str | None:
        """A block message, or None to let the call through."""

    def after(self, name: str, args: dict[str, Any], result: Any) -> str | dict[str, Any]:
        """The result to return, after observers and transforms have run."""


class Plan:
    """What dispatch needs for one entry, worked out once: the checker, the deadline."""

    __slots__ = (
        "entry",
        "handler",
        "check",
        "validates",
        "timeout",
        "fast",
        "permit",
        "judge",
        "pack",
    )

    def __init__(
        self,
        entry: ToolEntry,
        handler: Handler,
        check: Checker | None,
        validates: bool,
        timeout: float | None,
    ) -> None:
        self.entry = entry
        #: What a call runs: the entry's handler, run as its maker's code when a
        #: pack made it (``_core.callers.made_by``).
        self.handler = handler
        self.check = check
        self.validates = validates
        self.timeout = timeout
        #: The tool's fast call (``fast_call``), when the dispatcher built one.
        self.fast: FastCall | None = None
        #: The operator's rules that can match this tool's calls, while permissions
        #: are installed (the plan is dropped when they change, as on every write).
        self.permit: ToolPermit | None = None
        #: The installed permissions ``permit`` was worked out from.
        self.judge: CallJudge | None = None
        #: The tool's owner label (``registry.get_owner``): what ``pack:`` rules match.
        self.pack = ""


#: A hot tool, as ``dispatch`` reads it in one unpacking: ``(fast call,
#: handler, max_result_size_chars, plan)`` for a simple schema's checks,
#: ``(None, handler, max_result_size_chars, plan)`` for a tool that takes any
#: dict. A plain tuple: a tuple subclass unpacks slower.
Hot = tuple[FastCall | None, Handler, int | None, Plan]


def dispatch_checked(plan: Plan, args: Any, kwargs: dict[str, Any]) -> str | dict[str, Any]:
    """Dispatch with whatever the fast path skips: parsing, validation, deadline, async."""
    args, problem = checked(plan, args)
    if problem is not None:
        return problem
    return run_checked(plan, args, kwargs)


def run_checked(plan: Plan, args: Any, kwargs: dict[str, Any]) -> str | dict[str, Any]:
    """Run the handler on arguments ``checked`` passed, and hold its result to the contract."""
    entry = plan.entry
    try:
        if plan.timeout is not None:
            result = call_with_deadline(plan.handler, entry.is_async, args, kwargs, plan.timeout)
        else:
            result = plan.handler(args, **kwargs)
            if entry.is_async:
                result = run_coroutine(result)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return call_failed(plan.entry, plan.timeout, exc)
    if type(result) is str:
        return cap(entry, result)
    return off_contract(entry, result)


def rejected_call(plan: Plan) -> FastCall:
    """``dispatch_checked`` without keyword arguments, for a fast call to hand
    on what it does not settle; it never raises but ``KeyboardInterrupt``."""
    name = plan.entry.name

    def rejected(args: Any) -> str | dict[str, Any]:
        try:
            return dispatch_checked(plan, args, {})
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            return internal(name, exc)

    return rejected


def hot_path(plan: Plan, argument_check: ArgumentCheck | None) -> Hot | None:
    """How a plain call of a sync tool without a deadline skips the general path, if it can."""
    entry = plan.entry
    limit = entry.max_result_size_chars
    if argument_check is None:  # any dict will do: the handler is called right in dispatch
        return (None, plan.handler, limit, plan)
    if argument_check.checks is None:
        return None  # only the full validator can tell
    plan.fast = build_fast_call(entry, plan.handler, argument_check.checks, rejected_call(plan))
    if plan.fast is None:
        return None
    return (plan.fast, plan.handler, limit, plan)


async def awaited(coro: Any) -> Any:
    """Await a handler's coroutine; its SystemExit or KeyboardInterrupt is its own failure."""
    try:
        return await coro
    except INTERRUPTS as exc:
        raise WorkerInterrupt(exc) from None


def cancelled_from_outside(exc: BaseException) -> bool:
    """A CancelledError because the host cancelled our task, which must go through."""
    import asyncio

    if not isinstance(exc, asyncio.CancelledError):
        return False
    task = asyncio.current_task()
    # Python 3.10 cannot tell the two apart: any cancellation then goes through.
    cancelling = getattr(task, "cancelling", None)
    return cancelling is None or cancelling() > 0
