"""Who is registering: plugin policies, and ownership read off the code, never claimed.

A pack is known by the files its distribution installed (its ``RECORD``) or its
namespace's directories, never by ``__name__``. The rules, and why this is a consent
check and not a sandbox: docs/registry.md, "Ownership and the write gate".
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import FrameType, FunctionType, MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from .._contract.names import BUILTIN_NAMESPACE
from .real_paths import RealPaths

if TYPE_CHECKING:
    from .plugin_policy import PluginPolicy

#: Namespaces no plugin may be bound to: toolreg itself (built-ins included), and
#: the built-ins' folder name, which a checkout's root on sys.path makes importable.
RESERVED_NAMESPACES = frozenset({"toolreg", "builtin_tools"})

#: Owner labels toolreg gives out itself; no pack can be named so (see reserved_label).
BUILTIN_LABEL = "builtin"
HOST_LABEL = "host"
MCP_LABEL_PREFIX = "mcp:"
LOCAL_LABEL_PREFIX = "local:"
_BUILTIN_PREFIX = BUILTIN_NAMESPACE + "."


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


class Owner(NamedTuple):  # not a frozen dataclass: cheaper to create at import
    """Who a registration belongs to: a label for people, a policy for rules."""

    label: str
    policy: PluginPolicy | None = None
    #: Host code registered it on the plugin's behalf (``acting_for``): its
    #: callables are the host's, so they run as the host's, not as the plugin's.
    acted: bool = False

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


def handler_origins(handler: Callable[..., Any]) -> list[tuple[str | None, str | None]]:
    """(module, filename) for every layer of a wrapped callable, outermost first."""
    # Every layer counts, so a plugin cannot launder a registration through a
    # partial, a bound method or functools.wraps (a borrowed built-in handler is
    # caught by the stack walk instead: the pack's frame is on it).
    if type(handler) is FunctionType and not handler.__dict__:
        # A plain function with no attributes set has no layer below it
        # (``func``, ``__func__`` and ``__wrapped__`` would be in its __dict__).
        module = handler.__module__
        return [((module if isinstance(module, str) else None), handler.__code__.co_filename)]
    origins: list[tuple[str | None, str | None]] = []
    seen: set[int] = set()
    pending: list[Any] = [handler]
    while pending and len(seen) < _MAX_UNWRAP:
        obj = pending.pop()
        if obj is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        code = getattr(obj, "__code__", None)
        module = getattr(obj, "__module__", None)
        origins.append(
            (
                module if isinstance(module, str) else None,
                code.co_filename if code is not None else None,
            )
        )
        pending.append(getattr(obj, "func", None))  # functools.partial
        pending.append(getattr(obj, "__func__", None))  # bound method
        pending.append(getattr(obj, "__wrapped__", None))  # functools.wraps
        if callable(obj) and not hasattr(obj, "__code__") and not isinstance(obj, type):
            pending.append(type(obj).__call__)  # a callable object's method
    return origins


def builtin_on_stack(frame: FrameType | None) -> bool:
    """Whether a frame from ``frame`` outwards runs in a built-in module.

    Asked only once no plugin is involved: module names only tell built-in
    code from the host's. Frames of one module share its globals, so a run of
    them costs one name check.
    """
    checked = None
    while frame is not None:
        module_globals = frame.f_globals
        if module_globals is not checked:
            checked = module_globals
            name = module_globals.get("__name__")
            # is_builtin_module, inlined: this runs for every module on the stack.
            if isinstance(name, str) and (
                name.startswith(_BUILTIN_PREFIX) or name == BUILTIN_NAMESPACE
            ):
                return True
        frame = frame.f_back
    return False


class PolicyBook:
    """The bound plugin namespaces, and which plugin each source file belongs to.

    Copy-on-write like the table: readers take the current dicts without a lock.
    A file's answer is worked out once and kept across binds: a bind or unbind
    drops only the answers it can change (see :meth:`_revise`).
    """

    def __init__(self) -> None:
        #: Namespace -> policy; a new dict after every bind or unbind, never changed.
        self.bound: dict[str, PluginPolicy] = {}
        # filename as the code object spells it -> its plugin (None: no plugin's).
        self._memo: dict[str, PluginPolicy | None] = {}
        # filename as the code object spells it -> its real path, resolved once.
        self._real: dict[str, str] = {}
        # real path -> the spellings that resolved to it, so a bind finds the
        # answers its RECORD changes without reading every answer in the memo.
        self._spellings: dict[str, list[str]] = {}
        self._resolve = RealPaths()
        # Namespaces bound before their code could be found (bound first,
        # written or installed after): looked for again on every bind and
        # unbind, and on every lookup the memo cannot answer.
        self._pending: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.bound)

    def get(self, namespace: str) -> PluginPolicy | None:
        return self.bound.get(namespace)

    def bind(
        self,
        namespace: str,
        allowed: bool,
        plugin_id: str | None = None,
        paths: Sequence[str] | None = None,
        tool_patterns: Sequence[str] | None = None,
        files: Iterable[str] = (),
        locked_tools: Mapping[str, str] | None = None,
    ) -> PluginPolicy:
        if not namespace or not all(part.isidentifier() for part in namespace.split(".")):
            raise ValueError(f"Invalid plugin module namespace: {namespace!r}")
        if namespace.split(".")[0] in RESERVED_NAMESPACES:
            raise ValueError(f"Namespace {namespace!r} is reserved and cannot be a plugin's")
        found = _namespace_paths(namespace) if paths is None else ()
        from .plugin_policy import PluginPolicy  # defined once a plugin is bound

        policy = PluginPolicy(
            namespace=namespace,
            allowed=bool(allowed),
            plugin_id=plugin_id or namespace,
            paths=tuple(map(self._resolve, paths or ())) + found,
            tool_patterns=None if tool_patterns is None else tuple(tool_patterns),
            files=frozenset(map(self._resolve, files)),
            # A copy the pack cannot reach to change: the gate reads it on each write.
            locked_tools=None if locked_tools is None else MappingProxyType(dict(locked_tools)),
        )
        self._replace({namespace: policy})
        located = policy.paths or policy.files or paths is not None
        self._pending = (self._pending - {namespace}) | (set() if located else {namespace})
        self._locate_pending()
        return policy

    def unbind(self, namespace: str) -> PluginPolicy | None:
        policies = dict(self.bound)
        policy = policies.pop(namespace, None)
        # Policies first, then the memo: a reader that takes the new memo
        # (it reads the memo first) then sees the new policies too.
        self.bound = policies
        if policy is not None:
            self._memo = self._revise(policy, None)
        self._pending = self._pending - {namespace}
        self._locate_pending()
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
        # "<string>", "<frozen ...>": no file to read ownership from. Such code is
        # attributed through the real frames that ran it (exec, eval, compile).
        found = None
        if not filename.startswith("<"):
            real = self._real.get(filename)
            if real is None:
                real = self._resolve(filename)
                if len(self._real) < _MEMO_LIMIT:
                    self._real[filename] = real
                    self._spellings.setdefault(real, []).append(filename)
            found = _owner_of_file(real, list(self.bound.values()))
        if len(memo) < _MEMO_LIMIT:
            memo[filename] = found
        return found

    def _replace(self, policies: dict[str, PluginPolicy]) -> None:
        """Bind (or rebind) namespaces, revising the memo for each."""
        previous = self.bound
        self.bound = {**previous, **policies}
        memo = self._memo
        for namespace, policy in policies.items():
            self._memo = memo = self._revise(previous.get(namespace), policy, memo)

    def _revise(
        self,
        old: PluginPolicy | None,
        new: PluginPolicy | None,
        memo: dict[str, PluginPolicy | None] | None = None,
    ) -> dict[str, PluginPolicy | None]:
        """The memo without the answers that ``new`` taking ``old``'s place can change.

        A file's owner is the first policy whose RECORD lists it, else the first
        whose directories hold it. Replacing ``old`` by ``new`` can therefore
        change only the answers that were ``old``, the files ``new``'s RECORD
        lists, and files in ``new``'s directories that no RECORD gave an owner.
        Everything else keeps its answer; dropped answers are worked out again.
        """
        kept = (self._memo if memo is None else memo).copy()  # one step: readers add to it
        real = self._real
        if old is None and new is not None and not new.paths and len(real) < _MEMO_LIMIT:
            # A new RECORD alone (a pack's usual bind) changes only its files'
            # answers; every file in the memo is resolved (the limit was never
            # reached), so its spellings are all there is to drop.
            spellings = self._spellings
            for path in new.files & spellings.keys():
                for filename in spellings[path]:
                    kept.pop(filename, None)
            return kept
        for filename, owner in list(kept.items()):
            if owner is not None and owner is old:
                del kept[filename]
                continue
            if new is None or filename.startswith("<"):
                continue
            path = real.get(filename)  # None: not resolved (the memo was full)
            if (
                path is None
                or path in new.files
                or (
                    new.paths and (owner is None or path not in owner.files) and new.owns_file(path)
                )
            ):
                del kept[filename]
        return kept

    def _locate_pending(self) -> dict[str, PluginPolicy | None] | None:
        """Find the code of namespaces that had none when bound; the new memo if any was."""
        if not self._pending:
            return None
        from dataclasses import replace  # loaded: a policy is pending

        located = {}
        for namespace in self._pending:
            policy = self.bound.get(namespace)
            found = _namespace_paths(namespace) if policy is not None else ()
            if policy is not None and found:
                located[namespace] = replace(policy, paths=found)
        if not located:
            return None
        self._replace(located)
        self._pending = self._pending - located.keys()
        return self._memo

    def involved(
        self,
        frame: FrameType | None,
        origins: Iterable[tuple[str | None, str | None]] = (),
    ) -> list[PluginPolicy]:
        """Every bound plugin with code on the stack from ``frame`` outwards, then among
        the origins' files; innermost first, without repeats.

        The walk reads every frame, to the outermost: any of them may be a
        plugin's, and the gate judges them all. A run of frames from one file
        is looked up once.
        """
        found: list[PluginPolicy] = []
        if not self.bound:
            return found
        memo, lookup = self._memo, self.policy_of_file
        filename = None
        while frame is not None:
            code_file = frame.f_code.co_filename
            if code_file is not filename:
                filename = code_file
                try:
                    policy = memo[filename]
                except KeyError:
                    policy = lookup(filename)
                    memo = self._memo  # a lookup may locate a pending pack: a new memo
                if policy is not None and policy not in found:
                    found.append(policy)
            frame = frame.f_back
        return self.with_files(found, origins) if origins else found

    def with_files(
        self, found: list[PluginPolicy], origins: Iterable[tuple[str | None, str | None]]
    ) -> list[PluginPolicy]:
        """``found`` and then the plugins of the origins' files, without repeats.

        ``found`` itself is left as it was: a batch shares its stack's list.
        """
        if not self.bound:
            return found
        plugins = found
        for _, filename in origins:
            policy = self.policy_of_file(filename)
            if policy is not None and policy not in plugins:
                plugins = [*plugins, policy]
        return plugins


def _owner_of_file(real: str, policies: list[PluginPolicy]) -> PluginPolicy | None:
    # A RECORD is exact, so it wins over a directory: a wheel that drops a file
    # into another pack's package directory does not borrow that pack's identity.
    for policy in policies:
        if real in policy.files:
            return policy
    for policy in policies:
        if policy.paths and policy.owns_file(real):
            return policy
    return None


def is_builtin_module(module: object) -> bool:
    """Whether ``module`` names the built-in tools package or a module in it."""
    return isinstance(module, str) and (
        module == BUILTIN_NAMESPACE or module.startswith(_BUILTIN_PREFIX)
    )


def __getattr__(name: str) -> Any:
    # ``PluginPolicy`` is defined where it is first needed: a dataclass costs
    # about half a millisecond to make, and a start-up that binds no plugin needs none.
    if name == "PluginPolicy":
        from .plugin_policy import PluginPolicy

        return PluginPolicy
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
