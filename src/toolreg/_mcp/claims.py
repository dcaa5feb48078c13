"""Registry names that tools of two MCP servers map to: given to neither.

Each server's link stakes the ``mcp__<server>__<tool>`` names its listing maps
to; a name staked by two servers is *contested* and neither publishes it.
"""

from __future__ import annotations

from collections.abc import Callable


class NameClaims:
    """Registry name → {server: its tool's own name}, for the servers of one manager."""

    def __init__(self) -> None:
        self._claims: dict[str, dict[str, str]] = {}
        self._staked: dict[str, frozenset[str]] = {}
        self._reregister_tools: dict[str, Callable[[], None]] = {}

    def join(self, server: str, reregister: Callable[[], None]) -> None:
        """Let ``server`` stake names; ``reregister`` re-applies its listing when a rival moves."""
        self._reregister_tools[server] = reregister

    def stake(self, server: str, names: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
        """Replace ``server``'s names (registry name → its tool); return its contested ones.

        The result maps each contested name to the rivals' (server, tool) pairs,
        sorted. Rivals whose own names became (un)contested reregister first.
        """
        old = self._staked.get(server, frozenset())
        new = frozenset(names)
        for name in old - new:
            holders = self._claims[name]
            del holders[server]
            if not holders:
                del self._claims[name]
        for name, tool in names.items():
            self._claims.setdefault(name, {})[server] = tool
        self._staked[server] = new
        rivals = {other for name in old ^ new for other in self._claims.get(name, ())}
        # Rivals republish at once, so who publishes a name depends only on the
        # servers' current listings, never on who connected or listed first.
        for other in sorted(rivals - {server}):
            self._reregister_tools[other]()
        return self.contested(server)

    def contested(self, server: str) -> dict[str, list[tuple[str, str]]]:
        """``server``'s names that other servers' tools map to as well, with those tools."""
        contested = {}
        for name in self._staked.get(server, ()):
            holders = self._claims[name]
            if len(holders) > 1:
                contested[name] = sorted((s, t) for s, t in holders.items() if s != server)
        return contested
