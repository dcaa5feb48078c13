"""Local folder plugins: ``*.py`` files an operator drops into a configured folder.

Each is scanned like the built-ins, imported as ``toolreg_local.<stem>`` (plugin id
``local:<stem>``) and passes the same policy gate as an installed pack.
"""

from __future__ import annotations

import logging
import os
import sys
import types
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolreg._discovery import scan_cache as _scan_cache

from .builtins import _file_registers_tools, _import_from_file

if TYPE_CHECKING:
    import ast
    from pathlib import Path

logger = logging.getLogger("toolreg.plugins")

LOCAL_PACKAGE = "toolreg_local"


@dataclass(frozen=True)
class LocalPlugin:
    stem: str
    path: Path

    @property
    def plugin_id(self) -> str:
        return f"local:{self.stem}"

    @property
    def namespace(self) -> str:
        return f"{LOCAL_PACKAGE}.{self.stem}"


def _defines_hookimpls(tree: ast.Module) -> bool:
    import ast

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                name = getattr(target, "attr", None) or getattr(target, "id", None)
                if name == "hookimpl":
                    return True
    return False


def _is_plugin_file(path: str) -> bool:
    """Registers tools at import, or implements toolreg hooks."""
    if _file_registers_tools(path):
        return True
    import ast

    try:
        with open(path, "rb") as handle:
            return _defines_hookimpls(ast.parse(handle.read(), filename=path))
    except (OSError, SyntaxError, ValueError):
        return False


def find_local_plugins(folders: Iterable[Path]) -> list[LocalPlugin]:
    """Plugin files in the folders, in folder order then file name; first stem wins."""
    found: dict[str, LocalPlugin] = {}
    for folder in folders:
        try:
            with os.scandir(folder) as listing:
                files = sorted(
                    (entry.name, entry.stat())
                    for entry in listing
                    if entry.name.endswith(".py")
                    and entry.name[:-3].isidentifier()
                    and not entry.name.startswith("_")
                    and entry.is_file()
                )
        except OSError as exc:
            logger.warning("Cannot list local plugin folder %s: %s", folder, exc)
            continue
        verdicts = _scan_cache.verdicts(str(folder), files, _is_plugin_file)
        # No plugin file has run yet, so a cached "not a plugin" is checked now.
        unsure = [f for f, verdict in zip(files, verdicts, strict=True) if verdict is None]
        confirmed = iter(_scan_cache.recheck(str(folder), unsure, _is_plugin_file))
        verdicts = [next(confirmed) if v is None else v for v in verdicts]
        for (name, _), wanted in zip(files, verdicts, strict=True):
            stem = name[:-3]
            if not wanted:
                continue
            if stem in found:
                logger.warning(
                    "Local plugin %s in %s is shadowed by the one in %s",
                    stem,
                    folder,
                    found[stem].path.parent,
                )
                continue
            from pathlib import Path  # only a plugin found needs it

            found[stem] = LocalPlugin(stem, Path(folder) / name)
    return list(found.values())


def import_local(plugin: LocalPlugin) -> types.ModuleType:
    """Import the file as ``toolreg_local.<stem>``."""
    if LOCAL_PACKAGE not in sys.modules:
        package = types.ModuleType(LOCAL_PACKAGE, "Local folder plugins loaded by toolreg.")
        package.__path__ = []
        sys.modules[LOCAL_PACKAGE] = package
    return _import_from_file(plugin.namespace, str(plugin.path))
