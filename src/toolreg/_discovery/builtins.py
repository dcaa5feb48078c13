"""Built-in discovery: find and import the modules that register tools.

Importing a tool module is what registers its tools, so a file is imported when an
:mod:`ast` scan shows its module level registering one. The verdicts are cached
(:mod:`.scan_cache`), but a cached "registers nothing" is never trusted on its own.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.util
import logging
import os
import sys
import threading
import types
from typing import TYPE_CHECKING

from toolreg._contract.names import BUILTIN_NAMESPACE
from toolreg._discovery import scan_cache as _scan_cache
from toolreg._registry.registry import registry

if TYPE_CHECKING:
    import ast
    from pathlib import Path

_log = logging.getLogger("toolreg.discovery")

#: Files in a tools dir that are infrastructure, never tool modules.
_SKIP = frozenset({"__init__.py", "registry.py", "mcp_tool.py"})
_DEFAULT_PACKAGE = BUILTIN_NAMESPACE

# Module name -> "ExcType: message" for the latest failed import of that module.
_failures: dict[str, str] = {}
# Modules loaded by file location bypass the import system's per-module locks, so
# serialise discovery to avoid executing one module twice from two threads.
_lock = threading.RLock()


def get_discovery_failures() -> dict[str, str]:
    """Return a copy of ``{module name: "ExcType: message"}`` for tool modules that failed."""
    return dict(_failures)


def discover_builtin_tools(tools_dir: Path | str | None = None) -> list[str]:
    """Import every tool module in ``tools_dir`` and return their names, in file-name order.

    ``tools_dir`` defaults to the ``toolreg.builtin_tools`` package. Modules that
    fail to import are logged, recorded in :func:`get_discovery_failures` and
    skipped. Already-imported modules are not executed again but are listed.
    """
    with _lock:
        if tools_dir is None:
            directory = _default_tools_dir()
            if directory is None:
                return []
            package: str | None = _DEFAULT_PACKAGE
        else:
            directory = os.path.realpath(os.fspath(tools_dir))
            # The built-ins' own folder, named explicitly, keeps their one module
            # name: a second name would import and register every built-in twice.
            package = _DEFAULT_PACKAGE if _is_builtin_dir(directory) else None

        files: list[tuple[str, os.stat_result]] = []
        has_init = False
        try:
            with os.scandir(directory) as it:
                for entry in it:
                    name = entry.name
                    if not name.endswith(".py"):
                        continue
                    if name in _SKIP:
                        has_init = has_init or name == "__init__.py"
                    elif name[:-3].isidentifier() and entry.is_file():
                        # A file deleted since the listing is simply not a tool.
                        with contextlib.suppress(FileNotFoundError):
                            files.append((name, entry.stat()))
        except OSError as exc:
            _log.warning("Cannot list tool directory %s: %s", directory, exc)
            return []
        files.sort(key=lambda f: f[0])
        refused: list[str] = []
        if package == _DEFAULT_PACKAGE:
            files, refused = _installed_by_toolreg(directory, files)

        from_file = False
        if package is None:
            package = _package_name(directory, has_init)
            if package is None:
                package = _synthetic_package(directory)
                from_file = True

        registers = _scan_cache.verdicts(directory, files, _file_registers_tools)
        wanted = [name for (name, _), verdict in zip(files, registers, strict=True) if verdict]
        imported, attempted = _import_tool_modules(package, directory, wanted, from_file)
        # A cached "registers nothing" is no evidence: a module that a tool module
        # imported has run (and registered) already; any other is scanned again.
        unsure = [
            (name, st)
            for (name, st), verdict in zip(files, registers, strict=True)
            if verdict is None and f"{package}.{name[:-3]}" not in sys.modules
        ]
        if unsure:
            rechecked = _scan_cache.recheck(directory, unsure, _file_registers_tools)
            late = [name for (name, _), verdict in zip(unsure, rechecked, strict=True) if verdict]
            more, tried = _import_tool_modules(package, directory, late, from_file)
            imported = sorted(imported + more)
            attempted += tried

        # A failure recorded for a file of this dir that is gone or no longer
        # registers anything is stale; keep the report about the current files.
        prefix = package + "."
        attempted += refused
        for stale in [m for m in _failures if m.startswith(prefix) and m not in attempted]:
            del _failures[stale]
        return imported


def _import_tool_modules(
    package: str, directory: str, names: list[str], from_file: bool
) -> tuple[list[str], list[str]]:
    """Import each file of ``names``; return the modules imported and those attempted."""
    imported: list[str] = []
    attempted: list[str] = []
    for name in names:
        module_name = f"{package}.{name[:-3]}"
        attempted.append(module_name)
        try:
            # One swap per module, and a module that fails leaves no tools behind.
            with registry.batch():
                if from_file:
                    _import_from_file(module_name, os.path.join(directory, name))
                else:
                    importlib.import_module(module_name)
        except (Exception, SystemExit) as exc:  # sys.exit() must not end the host
            _log.warning("Could not import tool module %s: %s", module_name, exc)
            _log.debug("Traceback for tool module %s", module_name, exc_info=True)
            _failures[module_name] = f"{type(exc).__name__}: {exc}"
            continue
        _failures.pop(module_name, None)
        imported.append(module_name)
    return imported, attempted


def _installed_by_toolreg(
    directory: str, files: list[tuple[str, os.stat_result]]
) -> tuple[list[tuple[str, os.stat_result]], list[str]]:
    """The files of the built-ins' folder that are toolreg's own; and the modules refused.

    Installed from a wheel, toolreg's own files are those toolreg-core's RECORD
    lists: a file another distribution installed into ``toolreg/builtin_tools/``
    is not a built-in, and is never imported (it would register as ``builtin``,
    before any pack is bound). In a checkout or an editable install the folder
    is the checkout's, and all of it is toolreg's.
    """
    from toolreg._contract.version import __version__
    from toolreg._discovery.dist_info import core_record_files

    toolreg_dir = os.path.dirname(os.path.realpath(os.path.dirname(__file__)))
    own = core_record_files(toolreg_dir, f"{_DEFAULT_PACKAGE.replace('.', '/')}/", __version__)
    if own is None:
        return files, []
    real_dir = os.path.realpath(directory)
    kept, refused = [], []
    for name, st in files:
        if os.path.join(real_dir, name) in own:
            kept.append((name, st))
            continue
        module_name = f"{_DEFAULT_PACKAGE}.{name[:-3]}"
        refused.append(module_name)
        reason = (
            f"{os.path.join(real_dir, name)} is not a built-in: toolreg-core's RECORD does "
            "not list it (another distribution installed it), so it is not imported"
        )
        if _failures.get(module_name) != f"PermissionError: {reason}":
            # Logged with the packs (a distribution did this): a command sums it up
            # in one line, and ``toolreg doctor`` lists it with the import failures.
            logging.getLogger("toolreg.plugins").warning(
                "Refusing tool module %s: %s", module_name, reason
            )
        _failures[module_name] = f"PermissionError: {reason}"
    return kept, refused


def _is_builtin_dir(directory: str) -> bool:
    try:
        spec = importlib.util.find_spec(_DEFAULT_PACKAGE)
    except (ImportError, ValueError):
        return False
    locations = (spec.submodule_search_locations or []) if spec else []
    return any(os.path.realpath(loc) == directory for loc in locations)


def _default_tools_dir() -> str | None:
    """The directory of the ``toolreg.builtin_tools`` package.

    Importing the package itself costs nothing extra: importing any of its
    tool modules imports it anyway, and its ``__path__`` saves a second path
    search.
    """
    try:
        package = importlib.import_module(_DEFAULT_PACKAGE)
    except ImportError as exc:
        _log.warning("Package %r not found; no built-in tools loaded (%s)", _DEFAULT_PACKAGE, exc)
        return None
    paths = list(getattr(package, "__path__", ()))
    return paths[0] if paths else None


def _package_name(directory: str, has_init: bool) -> str | None:
    """Return the importable package name of ``directory``, or None if it has none.

    Only a regular package whose parent is on ``sys.path`` qualifies, and only if
    that name really resolves to ``directory`` (not a same-named package found
    earlier on ``sys.path``).
    """
    name = os.path.basename(directory)
    if not has_init or not name.isidentifier():
        return None
    module = sys.modules.get(name)
    if module is not None:
        locations = getattr(module, "__path__", None) or []
    else:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        locations = (spec.submodule_search_locations or []) if spec else []
    if any(os.path.realpath(loc) == directory for loc in locations):
        return name
    return None


def _synthetic_package(directory: str) -> str:
    """Create (once) a private package whose ``__path__`` is ``directory``; return its name.

    The name is derived from the directory, so two tool dirs never collide and
    relative imports between files of one dir resolve inside that package.
    """
    import hashlib  # only needed for non-package dirs; keep it off the default path

    digest = hashlib.sha1(directory.encode("utf-8"), usedforsecurity=False).hexdigest()
    name = f"toolreg_ext_{digest[:8]}"
    if name not in sys.modules:
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [directory]
        sys.modules[name] = importlib.util.module_from_spec(spec)
    return name


def _import_from_file(module_name: str, path: str) -> types.ModuleType:
    """Import ``path`` as ``module_name`` with import semantics (no re-execution)."""
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    # Registered before executing, like the import system, so circular imports work.
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    parent, _, child = module_name.rpartition(".")
    setattr(sys.modules[parent], child, module)
    return module


def _file_registers_tools(path: str) -> bool:
    """Return whether the file at ``path`` registers tools when imported."""
    import ast  # cold path only: a warm start takes every verdict from the cache

    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as exc:
        _log.debug("Cannot read %s: %s", path, exc)
        return False
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError):
        # Unparseable: import it anyway if it looks like a tool module, so the
        # error is reported as a failure instead of the tools silently vanishing.
        return b"registry.register" in source or b"registry.tool" in source
    return _tree_registers_tools(tree)


def _tree_registers_tools(tree: ast.Module) -> bool:
    """Return whether code run at import time registers a tool (call or decorator).

    Recognised: ``registry.register(...)`` / ``<x>.registry.register(...)`` calls,
    and functions decorated with ``@tool``, ``@registry.tool``, ``@<x>.registry.tool``
    or ``@toolreg.tool`` (each with or without a call).
    """
    import ast

    def is_registry(node: ast.expr) -> bool:
        return (isinstance(node, ast.Name) and node.id == "registry") or (
            isinstance(node, ast.Attribute) and node.attr == "registry"
        )

    def is_tool_decorator(node: ast.expr) -> bool:
        if isinstance(node, ast.Call):
            node = node.func
        if isinstance(node, ast.Name):
            return node.id == "tool"
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "tool"
            and (
                is_registry(node.value)
                or (isinstance(node.value, ast.Name) and node.value.id == "toolreg")
            )
        )

    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "register"
            and is_registry(node.func.value)
        ):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # A function body only runs when called; its decorators run now.
            if any(is_tool_decorator(d) for d in node.decorator_list):
                return True
            continue
        if isinstance(node, (ast.ClassDef, ast.Lambda)):
            continue  # bodies not run as module-level code
        stack.extend(ast.iter_child_nodes(node))
    return False
