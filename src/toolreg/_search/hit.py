"""One answer of a search: a tool's name, its toolset and how well it fits."""

from __future__ import annotations

from typing import NamedTuple


class SearchHit(NamedTuple):
    """A tool that a search found, read-only: ``name``, ``toolset`` and ``score``.

    Higher scores fit better; scores compare within one search, not across
    searches or registries.
    """

    name: str
    toolset: str
    score: float
