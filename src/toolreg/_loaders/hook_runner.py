"""Dispatch hooks from packs, run fail-closed with a deadline.

pluggy collects and validates the hook implementations; this module calls
them one by one, so a failure can be pinned on the pack that caused it, and a
hook that raises or runs past its deadline blocks the call instead of letting
it through unchecked.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._contract.results import (
    clip,
    describe_exception,
    log_failure,
    plain_result,
    printable,
    tool_error,
)
from .._core.callers import run_made_by
from .._dispatch.workers import HOOK_POOL, DeadlineExceeded

if TYPE_CHECKING:
    from .._core.plugin_policy import PluginPolicy
    from .._policy.config import PluginsConfig

logger = logging.getLogger("toolreg.hooks")

DEFAULT_HOOK_TIMEOUT = 10.0


@dataclass(frozen=True)
class HookImpl:
    plugin_id: str
    function: Callable[..., Any]
    argnames: tuple[str, ...]
    #: The pack's policy: the hook runs as its code (``_core.callers.run_made_by``).
    maker: PluginPolicy | None = None

    def call(self, kwargs: Mapping[str, Any]) -> Any:
        return run_made_by(
            self.maker, self.function, **{name: kwargs[name] for name in self.argnames}
        )


@dataclass(frozen=True)
class HookFailure:
    """A hook that raised or timed out, and the call it blocked."""

    plugin_id: str
    hook: str
    tool: str
    error: str
    timestamp: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return {
            "plugin": self.plugin_id,
            "hook": self.hook,
            "tool": self.tool,
            "error": self.error,
            "timestamp": self.timestamp,
        }


class HookTimeout(Exception):
    pass


class HookRunner:
    """Implements the registry's dispatch-hook seam over packs' hook functions."""

    def __init__(
        self,
        pre: Sequence[HookImpl],
        post: Sequence[HookImpl],
        transform: Sequence[HookImpl],
        *,
        timeout: float | None = DEFAULT_HOOK_TIMEOUT,
    ) -> None:
        self.pre = tuple(pre)
        self.post = tuple(post)
        self.transform = tuple(transform)
        self.timeout = timeout
        self.failures: deque[HookFailure] = deque(maxlen=200)

    def __bool__(self) -> bool:
        return bool(self.pre or self.post or self.transform)

    # -- the DispatchHooks protocol -----------------------------------------

    def before(self, name: str, args: dict[str, Any]) -> str | None:
        kwargs = {"name": name, "args": args}
        for impl in self.pre:
            try:
                verdict = self._run(impl, kwargs)
                message = None if verdict is None else _block_message(verdict)
            except KeyboardInterrupt:
                raise  # Ctrl-C, when hooks run inline on the caller's thread
            except BaseException as exc:  # SystemExit included: fail closed, never exit
                return self._failed(impl, "toolreg_pre_tool_call", name, exc)
            if message is not None:
                message = clip(message)
                logger.info("Call to %s blocked by %s: %s", name, impl.plugin_id, message)
                return message
        return None

    def after(self, name: str, args: dict[str, Any], result: Any) -> str | dict[str, Any]:
        kwargs = {"name": name, "args": args, "result": result}
        for impl in self.post:
            try:
                self._run(impl, kwargs)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                return tool_error(
                    self._failed(impl, "toolreg_post_tool_call", name, exc),
                    error_type="blocked",
                    tool=name,
                )
        for impl in self.transform:
            try:
                replacement = self._run(impl, kwargs)
                plain = None if replacement is None else plain_result(replacement)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                return tool_error(
                    self._failed(impl, "toolreg_transform_tool_result", name, exc),
                    error_type="blocked",
                    tool=name,
                )
            if replacement is not None:
                if plain is None:
                    return tool_error(
                        f"Hook toolreg_transform_tool_result of plugin {impl.plugin_id} "
                        f"returned {type(replacement).__name__}, not a str or a multimodal dict",
                        error_type="blocked",
                        tool=name,
                    )
                return plain
        return result

    # -- internals --------------------------------------------------------------

    def _run(self, impl: HookImpl, kwargs: Mapping[str, Any]) -> Any:
        if not self.timeout:
            return impl.call(kwargs)
        try:
            return HOOK_POOL.run(self.timeout, impl.call, kwargs)
        except DeadlineExceeded as exc:
            if not exc.started:
                raise HookTimeout(
                    f"did not start within {self.timeout:g}s: every hook worker was busy"
                ) from None
            raise HookTimeout(f"did not finish within {self.timeout:g}s") from None

    def _failed(self, impl: HookImpl, hook: str, tool: str, exc: BaseException) -> str:
        error = clip(describe_exception(exc))
        self.failures.append(HookFailure(impl.plugin_id, hook, tool, error))
        log_failure(
            logger,
            f"Hook {hook} of plugin {impl.plugin_id} failed on {tool} (call blocked): {error}",
            exc,
        )
        return f"Call to {tool} blocked: hook {hook} of plugin {impl.plugin_id} failed ({error})"


def _block_message(verdict: Any) -> str | None:
    """A pre-call hook's answer as a block message, or None to allow."""
    if isinstance(verdict, str):
        return str.__str__(verdict)
    if isinstance(verdict, Mapping):
        if verdict.get("block", True) is False:
            return None
        return printable(verdict.get("message") or "Blocked by a plugin")
    if verdict is False:
        return "Blocked by a plugin"
    if verdict is True:
        return None
    return printable(verdict)


def runner_from(
    pm: Any, plugins: PluginsConfig, makers: Mapping[str, PluginPolicy]
) -> HookRunner | None:
    """The dispatch hooks ``pm`` holds, in pluggy's call order, minus those withheld.

    The operator withholds hooks with ``plugins.entries.<id>.hooks`` and bounds them
    with ``hook_timeout``. Each runs as the code of its pack's policy in ``makers``.
    None when no hook is left: dispatch runs no hook layer.
    """
    from ..hookspecs import DISPATCH_HOOKS

    # A pack's objects are registered as "<id>#<n>"; the report speaks of "<id>".
    names = {id(plugin): name.rpartition("#")[0] or name for name, plugin in pm.list_name_plugin()}
    impls = [
        [
            HookImpl(owner, impl.function, tuple(impl.argnames), makers.get(owner))
            # pluggy calls the last registered first; keep its order.
            for impl in reversed(getattr(pm.hook, hook).get_hookimpls())
            for owner in [names.get(id(impl.plugin), "?")]
            if plugins.entry(owner).allows_hook(hook)
        ]
        for hook in DISPATCH_HOOKS
    ]
    runner = HookRunner(*impls, timeout=plugins.hook_timeout)
    return runner if runner else None
