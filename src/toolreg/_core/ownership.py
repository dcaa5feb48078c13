"""Who is registering: plugin policies and code-derived ownership.

Ownership is never claimed by the caller. It is read off the code: the source
file that defined a handler, seen through ``functools.partial``, bound methods,
callable objects and ``__wrapped__`` chains, plus every file on the call stack.
A plugin therefore cannot launder a registration through a lambda, a partial,
``functools.wraps`` or a handler borrowed from a built-in.

A pack is recognised by the files its distribution installed (its ``RECORD``)
or, for local plugins and editable installs, the directories of its module
namespace; never by ``__name__`` or ``__module__``, which a pack can set to
anything. Module names only tell built-in code from the host's, once no pack
file is involved.

This is a consent check for well-behaved code, not a sandbox: Python code in
the host process can always reach around it. Process isolation is the boundary.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Namespaces no plugin may be bound to: toolreg itself and the built-ins.
RESERVED_NAMESPACES = frozenset({"toolreg", "builtin_tools"})
BUILTIN_NAMESPACE = "builtin_tools"

#: Owner labels toolreg gives out itself; no pack can be named so (see reserved_label).
BUILTIN_LABEL = "builtin"
HOST_LABEL = "host"
MCP_LABEL_PREFIX = "mcp:"
LOCAL_LABEL_PREFIX = "local:"


def reserved_label(plugin_id: str) -> str | None:
    """The reserved label a pack's id would collide with, or None."""
    if plugin_id in (BUILTIN_LABEL, HOST_LABEL):
        return plugin_id
    for prefix in (MCP_LABEL_PREFIX, LOCAL_LABEL_PREFIX):
        if plugin_id.startswith(prefix):
            return prefix + "*"
    return None


# Deep enough for any real decorator stack; bounded so a cycle cannot hang us.
_MAX_UNWRAP = 32
# Distinct source files remembered per policy generation; a process has far fewer.
_MEMO_LIMIT = 8192


@dataclass(frozen=True)
class PluginPolicy:
    """The operator's decision for one plugin module namespace."""

    namespace: str
    allowed: bool
    plugin_id: str
    #: Directories (or files) holding the namespace's code: a file under one
    #: belongs to the plugin unless another plugin's RECORD lists it.
    paths: tuple[str, ...] = field(default=(), compare=False)
    #: Glob patterns the plugin's tool names must match; None means any name.
    tool_patterns: tuple[str, ...] | None = None
    #: The exact files the plugin's distribution installed (real paths).
    files: frozenset[str] = field(default=frozenset(), compare=False)

    @property
    def config_key(self) -> str:
        """The operator config key that grants this plugin overrides."""
        return f"plugins.entries.{self.plugin_id}.allow_tool_override"

    def may_name(self, tool: str) -> bool:
        if self.tool_patterns is None:
            return True
        return any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.tool_patterns)

    def owns_file(self, filename: str) -> bool:
        """Whether a real path lies in the plugin's directories (not its RECORD)."""
        return any(filename == p or filename.startswith(p + os.sep) for p in self.paths)


@dataclass(frozen=True)
class Owner:
    """Who a registration belongs to: a label for people, a policy for rules."""

    label: str
    policy: PluginPolicy | None = None

    @property
    def is_plugin(self) -> bool:
        return self.policy is not None


def _namespace_paths(namespace: str) -> tuple[str, ...]:
    """Where a namespace's code lives, found without importing it when possible."""
    try:
        spec = importlib.util.find_spec(namespace)
    except (ImportError, ValueError):
        return ()
    if spec is None:
        return ()
    paths = list(spec.submodule_search_locations or ())
    if not paths and spec.origin and os.path.isfile(spec.origin):
        paths.append(spec.origin)
    return tuple(os.path.realpath(p) for p in paths)


def handler_origins(handler: Callable[..., Any]) -> Iterator[tuple[str | None, str | None]]:
    """Yield (module, filename) for every layer of a wrapped callable."""
    seen: set[int] = set()
    pending: list[Any] = [handler]
    while pending and len(seen) < _MAX_UNWRAP:
        obj = pending.pop()
        if obj is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        code = getattr(obj, "__code__", None)
        module = getattr(obj, "__module__", None)
        yield (
            module if isinstance(module, str) else None,
            code.co_filename if code is not None else None,
        )
        pending.append(getattr(obj, "func", None))  # functools.partial
        pending.append(getattr(obj, "__func__", None))  # bound method
        pending.append(getattr(obj, "__wrapped__", None))  # functools.wraps
        if callable(obj) and not hasattr(obj, "__code__") and not isinstance(obj, type):
            pending.append(type(obj).__call__)  # a callable object's method


def caller_origins(depth: int = 2) -> Iterator[tuple[str | None, str | None]]:
    """Yield (module, filename) for each frame on the stack, innermost first."""
    frame = sys._getframe(depth)
    while frame is not None:
        yield frame.f_globals.get("__name__"), frame.f_code.co_filename
        frame = frame.f_back


class PolicyBook:
    """The bound plugin namespaces, and which plugin each source file belongs to.

    Copy-on-write like the table: readers take the current dicts without a lock.
    """

    def __init__(self) -> None:
        self._by_namespace: dict[str, PluginPolicy] = {}
        # filename as the code object spells it -> its plugin; dropped on every
        # bind and unbind, so an answer never outlives the policies it came from.
        self._memo: dict[str, PluginPolicy | None] = {}
        # Namespaces bound before their code could be found (bound first,
        # written or installed after): located on the next lookup that misses.
        self._pending: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self._by_namespace)

    def get(self, namespace: str) -> PluginPolicy | None:
        return self._by_namespace.get(namespace)

    def bind(
        self,
        namespace: str,
        allowed: bool,
        plugin_id: str | None = None,
        paths: Sequence[str] | None = None,
        tool_patterns: Sequence[str] | None = None,
        files: Iterable[str] = (),
    ) -> PluginPolicy:
        if not namespace or not all(part.isidentifier() for part in namespace.split(".")):
            raise ValueError(f"Invalid plugin module namespace: {namespace!r}")
        if namespace.split(".")[0] in RESERVED_NAMESPACES:
            raise ValueError(f"Namespace {namespace!r} is reserved and cannot be a plugin's")
        found = _namespace_paths(namespace) if paths is None else ()
        policy = PluginPolicy(
            namespace=namespace,
            allowed=bool(allowed),
            plugin_id=plugin_id or namespace,
            paths=tuple(os.path.realpath(p) for p in (paths or ())) + found,
            tool_patterns=None if tool_patterns is None else tuple(tool_patterns),
            files=frozenset(os.path.realpath(f) for f in files),
        )
        self._by_namespace = {**self._by_namespace, namespace: policy}
        self._memo = {}
        located = policy.paths or policy.files or paths is not None
        self._pending = (self._pending - {namespace}) | (set() if located else {namespace})
        return policy

    def unbind(self, namespace: str) -> PluginPolicy | None:
        policies = dict(self._by_namespace)
        policy = policies.pop(namespace, None)
        self._by_namespace = policies
        self._memo = {}
        self._pending = self._pending - {namespace}
        return policy

    def policy_of_file(self, filename: str | None) -> PluginPolicy | None:
        """The plugin whose code lives in ``filename``, or None."""
        if not filename:
            return None
        memo = self._memo
        try:
            return memo[filename]
        except KeyError:
            pass
        if self._pending:
            memo = self._locate_pending() or memo
        found = _owner_of_file(filename, self._by_namespace.values())
        if len(memo) < _MEMO_LIMIT:
            memo[filename] = found
        return found

    def _locate_pending(self) -> dict[str, PluginPolicy | None] | None:
        """Find the code of namespaces that had none when bound; the new memo if any was."""
        located = {}
        for namespace in self._pending:
            policy = self._by_namespace.get(namespace)
            found = _namespace_paths(namespace) if policy is not None else ()
            if policy is not None and found:
                located[namespace] = dataclasses.replace(policy, paths=found)
        if not located:
            return None
        self._by_namespace = {**self._by_namespace, **located}
        self._pending = self._pending - located.keys()
        self._memo = {}
        return self._memo

    def involved(self, origins: Iterable[tuple[str | None, str | None]]) -> list[PluginPolicy]:
        """Every bound plugin among the origins' files, innermost first, without repeats."""
        found: list[PluginPolicy] = []
        if not self._by_namespace:
            return found
        for _, filename in origins:
            policy = self.policy_of_file(filename)
            if policy is not None and policy not in found:
                found.append(policy)
        return found


def _owner_of_file(filename: str, policies: Iterable[PluginPolicy]) -> PluginPolicy | None:
    # "<string>", "<frozen ...>": no file to read ownership from. Such code is
    # attributed through the real frames that ran it (exec, eval, compile).
    if filename.startswith("<"):
        return None
    real = os.path.realpath(filename)
    policies = list(policies)
    # A RECORD is exact, so it wins over a directory: a wheel that drops a file
    # into another pack's package directory does not borrow that pack's identity.
    for policy in policies:
        if real in policy.files:
            return policy
    for policy in policies:
        if policy.paths and policy.owns_file(real):
            return policy
    return None


def is_builtin(origins: Iterable[tuple[str | None, str | None]]) -> bool:
    """Whether built-in code is among the origins (asked only once no plugin is)."""
    for module, _ in origins:
        if module and (module == BUILTIN_NAMESPACE or module.startswith(BUILTIN_NAMESPACE + ".")):
            return True
    return False
