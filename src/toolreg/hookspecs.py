"""Hook specifications for tool packs (pluggy project name ``toolreg``).

A pack implements any of these in the module its ``toolreg.tools`` entry point
names, marked with ``@toolreg.hookimpl``. A hook may accept any subset of the
arguments, by name.

Dispatch hooks fail closed: a hook that raises or runs past the timeout blocks
the call, and the failure is reported with the pack's id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pluggy

PROJECT_NAME = "toolreg"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
#: Marks a pack's hook implementations: ``@toolreg.hookimpl def toolreg_pre_tool_call(...)``.
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

#: The hooks that run around every dispatch (the others run once, at load).
DISPATCH_HOOKS = (
    "toolreg_pre_tool_call",
    "toolreg_post_tool_call",
    "toolreg_transform_tool_result",
)
#: The hooks that run once, while a pack loads.
SETUP_HOOKS = ("toolreg_configure", "toolreg_register_tools")


@hookspec
def toolreg_register_tools(registry: Any, settings: Mapping[str, Any]) -> None:
    """Register this pack's tools from a function rather than at import.

    ``settings`` is the operator's ``[plugins.entries.<id>.settings]`` table.
    Called once, right after the pack's module is imported.
    """


@hookspec(firstresult=True)
def toolreg_pre_tool_call(name: str, args: dict[str, Any]) -> Any:
    """Inspect a call before its handler runs.

    Return None to let it through. Return a message (a str, or
    ``{"block": True, "message": ...}``) to block it: the handler does not run
    and the model gets that message as a tool_error.
    """


@hookspec
def toolreg_post_tool_call(name: str, args: dict[str, Any], result: Any) -> None:
    """Observe a finished call and its result (audit, metrics)."""


@hookspec(firstresult=True)
def toolreg_transform_tool_result(name: str, args: dict[str, Any], result: Any) -> Any:
    """Return a replacement result, or None to keep it; the first non-None wins."""


@hookspec
def toolreg_configure(settings: Mapping[str, Any]) -> None:
    """Receive the operator's ``[plugins.entries.<id>.settings]`` table for this pack.

    Called once, right after the pack's module is imported, before
    ``toolreg_register_tools``.
    """
