"""A pack's modules: imported while ``toolreg.registry`` names the registry being loaded,
and forgotten again so that a reload executes them afresh."""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._registry.registry import ToolRegistry

# Packs register into ``toolreg.registry`` at import; loading into another
# registry swaps that name for the duration, one load at a time.
_singleton_lock = threading.RLock()


@contextlib.contextmanager
def registry_as_singleton(registry: ToolRegistry) -> Iterator[None]:
    import toolreg

    with _singleton_lock:
        previous = toolreg.registry
        toolreg.registry = registry
        try:
            yield
        finally:
            toolreg.registry = previous


def import_target(value: str) -> Any:
    """``module`` or ``module:attr.path`` → the object to hand to pluggy."""
    module_name, _, attr = value.partition(":")
    obj: Any = importlib.import_module(module_name.strip())
    for part in filter(None, attr.strip().split(".")):
        obj = getattr(obj, part)
    return obj


def purge_modules(namespaces: Sequence[str]) -> None:
    """Forget a plugin's modules, so loading it again executes them again."""
    # Runs before every pack's import. Mostly none of its modules is loaded:
    # one substring search over all the names (in C) finds that out.
    try:
        loaded = "\n" + "\n".join(sys.modules) + "\n"
    except TypeError:  # a key that is not a str: look at each name
        loaded = None
    if loaded is not None and not any(
        f"\n{ns}\n" in loaded or f"\n{ns}." in loaded for ns in namespaces
    ):
        return
    exact, prefixes = frozenset(namespaces), tuple(ns + "." for ns in namespaces)
    for name in list(sys.modules):
        if name in exact or (isinstance(name, str) and name.startswith(prefixes)):
            sys.modules.pop(name, None)
