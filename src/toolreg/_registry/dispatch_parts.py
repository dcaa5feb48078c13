"""The registry's dispatcher and batches, made by the first dispatch.

A process that only lists tools (``toolreg list``) never imports the dispatch
layer. The parts are made once, under a lock, and never replaced.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._core.callers import Callers
    from .._core.decisions import DecisionLog
    from .._core.permissions import Permissions
    from .._core.table import ToolTable
    from .._dispatch.dispatch import Dispatcher, DispatchHooks
    from .._dispatch.dispatch_many import Batches
    from .._dispatch.permission_check import Approver


class DispatchParts:
    """A dispatcher and its batches, from the first call that needs them."""

    def __init__(self, table: ToolTable, callers: Callers, log: DecisionLog) -> None:
        self._table = table
        self._callers = callers
        self._log = log
        #: None until made; then both parts, set in one assignment so the change
        #: listener sees both or neither.
        self.made: tuple[Dispatcher, Batches] | None = None
        self._lock = threading.Lock()

    def get(self) -> tuple[Dispatcher, Batches]:
        made = self.made
        return made if made is not None else self._make()

    def _make(self) -> tuple[Dispatcher, Batches]:
        # Imported here, outside any lock: listing tools never dispatches.
        from .._dispatch.dispatch import Dispatcher
        from .._dispatch.dispatch_many import Batches

        with self._lock:  # two first dispatches at once make one dispatcher
            if self.made is None:
                d = Dispatcher(self._table, self._callers, self._log)
                batches = Batches(d.dispatch, d.dispatch_call, d.adispatch_call, lambda: d.traced)
                # A plan made from now on is forgotten by the next write.
                self.made = (d, batches)
            return self.made

    def set_dispatch_hooks(self, hooks: DispatchHooks | None) -> None:
        if hooks is None and self.made is None:
            # Nothing to remove yet (every load of plugins says so): no dispatcher made.
            self._callers.require_host("change the dispatch hooks")
            return
        self.get()[0].set_dispatch_hooks(hooks)

    def set_permissions(self, permissions: Permissions | None) -> None:
        if permissions is None and self.made is None:
            # No rules to remove (every config without [permissions] says so): none made.
            self._callers.require_host("change the operator's permissions")
            return
        self.get()[0].set_permissions(permissions)

    @property
    def permissions(self) -> Permissions | None:
        made = self.made
        return made[0].permissions if made is not None else None

    def set_approver(self, approver: Approver | None) -> None:
        if approver is None and self.made is None:
            self._callers.require_host("set the approver")
            return
        self.get()[0].set_approver(approver)

    def permission_counts(self) -> list[dict[str, Any]]:
        made = self.made
        return made[0].permission_counts() if made is not None else []

    def set_validation(self, enabled: bool) -> None:
        if enabled and self.made is None:
            # On is how a dispatcher starts (and the config's default): none made for it.
            self._callers.require_host("turn argument validation on")
            return
        self.get()[0].set_validation(enabled)

    @property
    def validation_enabled(self) -> bool:
        made = self.made
        return made[0].validation_enabled if made is not None else True
