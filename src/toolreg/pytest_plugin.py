"""pytest fixtures for tool-pack authors, active wherever toolreg is installed.

Registered under the ``pytest11`` entry point, so a pack's tests just name them:

- ``tool_registry``: a fresh ``ToolRegistry`` that *is* ``toolreg.registry``
  for the test, with the operator's environment switches unset and the pack
  cache in a temporary directory;
- ``load_pack``: ``load_pack(target, *, config=None, builtins=False)`` loads a
  pack into ``tool_registry`` through the real loader and returns its
  ``PluginReport``.

The assertion helpers are plain functions in :mod:`toolreg.testing`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from toolreg import PluginReport, ToolRegistry

# toolreg itself is imported inside the fixtures: this module is loaded by every
# pytest run in an environment where toolreg is installed, used or not.

LoadPack = Callable[..., "PluginReport"]


@pytest.fixture
def tool_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolRegistry]:
    """A fresh registry, swapped in as ``toolreg.registry`` until the test ends.

    Packs doing ``from toolreg import registry`` while the test runs get this
    one. The machine's operator config and switches do not leak in.
    """
    import toolreg
    from toolreg.testing import OPERATOR_ENV

    for name in OPERATOR_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TOOLREG_CACHE_DIR", str(tmp_path / "toolreg-cache"))
    registry = toolreg.ToolRegistry()
    previous = toolreg.registry
    toolreg.registry = registry
    try:
        yield registry
    finally:
        toolreg.registry = previous


@pytest.fixture
def load_pack(tool_registry: ToolRegistry) -> Iterator[LoadPack]:
    """``load_pack(target, *, config=None, builtins=False) -> PluginReport``.

    ``target`` is a pack's module name (``toolreg_hello``) or its distribution
    name (``toolreg-hello``); ``config`` the operator config as TOML text or a
    ``Config``; ``builtins=True`` registers the built-in tools first. Packs are
    unloaded, and the modules they replaced put back, when the test ends.
    """
    from toolreg._pack_loader import PackLoader

    loader = PackLoader(tool_registry)  # called as load_pack(...) itself
    try:
        yield loader
    finally:
        loader.close()
