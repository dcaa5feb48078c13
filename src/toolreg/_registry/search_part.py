"""The registry's search index, made by the first search.

A registry that never searches makes no index, imports no stemmer and pays
nothing per write; once made, a write only marks its names for the index.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._contract.entry import ToolEntry, ToolOptions
    from .._core.table import ToolTable
    from .._search.index import SearchIndex


class SearchPart:
    """A SearchIndex over one table, from the first call that needs it."""

    def __init__(self, table: ToolTable) -> None:
        self._table = table
        #: None until the first search; the change listener reads it on every write.
        self.made: SearchIndex | None = None
        self._lock = threading.Lock()

    def get(self) -> SearchIndex:
        made = self.made
        return made if made is not None else self._make()

    def _make(self) -> SearchIndex:
        from .._search.index import SearchIndex  # imported here: most registries never search

        with self._lock:  # two first searches at once make one index
            if self.made is None:
                index = SearchIndex(self._lookup)
                # Listened to first, then every name marked: a write landing between
                # the two is marked twice, and none is missed.
                self.made = index
                index.forget(self._table.tools)
            return self.made

    def _lookup(self, name: str) -> tuple[ToolEntry, ToolOptions] | None:
        entry = self._table.live.get(name)
        options = self._table.get_options(name)
        if entry is None or options is None:
            return None
        return entry, options
