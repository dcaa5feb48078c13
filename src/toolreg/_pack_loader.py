"""The machinery behind the ``load_pack`` fixture: load packs through the real loader.

:class:`PackLoader` loads packs into one registry through the real
:class:`PluginHost` and, on ``close()``, unloads them and puts back the modules
the test had imported. :mod:`toolreg.testing` re-exports it with the
assertion helpers.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from ._contract.names import BUILTIN_NAMESPACE
from ._discovery.builtins import discover_builtin_tools
from ._discovery.entrypoints import PackRecord, find_packs
from ._loaders.api import _hosts
from ._loaders.pack_modules import registry_as_singleton
from ._loaders.plugins import PluginHost
from ._loaders.report import PluginReport
from ._policy.config import Config, parse_config
from ._policy.config import plugin_id as canonical_id
from ._registry.registry import ToolRegistry

__all__ = ["PackLoader", "resolve_pack"]


def resolve_pack(target: str) -> PackRecord:
    """The record to load for a module name (``toolreg_hello``) or a distribution name.

    A module importable here is wrapped in a record of its own, with plugin id
    the module's name canonicalised (``toolreg-hello``); anything else must name
    an installed distribution with ``toolreg.tools`` entry points.
    """
    if _importable(target):
        return PackRecord(
            plugin_id=canonical_id(target),
            distribution=target,
            version="0",
            entry_points=(("main", target),),
            requires_toolreg=None,
            path="",
        )
    wanted = canonical_id(target)
    packs = find_packs()
    for record in packs:
        if record.plugin_id == wanted:
            return record
    installed = ", ".join(p.plugin_id for p in packs) or "none"
    raise LookupError(
        f"load_pack({target!r}): no importable module {target!r} and no installed "
        f"distribution {wanted!r} with toolreg.tools entry points (installed packs: "
        f"{installed}); install the pack here first, e.g. pip install -e ."
    )


def _importable(name: str) -> bool:
    if not all(part.isidentifier() for part in name.split(".")):
        return False
    top = name.split(".")[0]
    if top in sys.modules:
        return True
    try:  # the top level only: finding "a.b" would import (and run) package "a"
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def _as_config(config: str | Config | None) -> Config:
    if config is None:
        return Config()  # the built-in defaults, never the machine's config file
    if isinstance(config, Config):
        return config
    if isinstance(config, str):
        return parse_config(config)
    raise TypeError(f"config must be TOML text, a Config or None, not {type(config).__name__}")


class _ModuleSnapshot:
    """``sys.modules`` under some prefixes as first seen, put back by ``restore()``.

    The loader imports a pack afresh; the modules a test file imported itself
    must be the ones it sees again afterwards. A prefix ending in ``.`` means
    the package's submodules only.
    """

    def __init__(self) -> None:
        self._saved: dict[str, dict[str, ModuleType]] = {}

    def remember(self, prefix: str) -> None:
        if prefix not in self._saved:
            self._saved[prefix] = {n: m for n, m in sys.modules.items() if _under(n, prefix)}

    def restore(self) -> None:
        for prefix, saved in self._saved.items():
            for name in [n for n in sys.modules if _under(n, prefix)]:
                module = sys.modules.pop(name)
                parent, _, child = name.rpartition(".")
                # `from pkg import mod` reads the attribute before sys.modules.
                if parent in sys.modules and getattr(sys.modules[parent], child, None) is module:
                    delattr(sys.modules[parent], child)
            sys.modules.update(saved)
            for name, module in saved.items():
                parent, _, child = name.rpartition(".")
                if parent in sys.modules:
                    setattr(sys.modules[parent], child, module)
        self._saved.clear()


def _under(name: str, prefix: str) -> bool:
    if prefix.endswith("."):
        return name.startswith(prefix)
    return name == prefix or name.startswith(prefix + ".")


class PackLoader:
    """Loads packs into one registry through the real :class:`PluginHost`.

    Everything the loader checks applies: the operator switches in ``config``,
    compatibility, namespaces, override consent, rollback. ``close()`` unloads
    what was loaded and puts the imported modules back as they were.
    """

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self.host: PluginHost | None = None
        self._modules = _ModuleSnapshot()
        self._builtins = False

    def __call__(
        self, target: str, *, config: str | Config | None = None, builtins: bool = False
    ) -> PluginReport:
        """Load ``target`` (a module or distribution name) and return the loader's report.

        ``config`` is the operator's config, as TOML text or a ``Config``; the
        default is toolreg's defaults. ``builtins=True`` first registers the
        built-in tools, so there is something to override. A pack loaded before
        is unloaded and loaded afresh under the new config; other packs stay.
        """
        record = resolve_pack(target)
        settings = _as_config(config)
        for namespace in record.namespaces:
            self._modules.remember(namespace)
        host = self._host(settings)
        if record.plugin_id in host.active:
            host.unload(record.plugin_id)  # before the built-ins: it may hold their names
        if builtins:
            self.load_builtins()
        return host.load_all(packs=[record])

    def load_builtins(self) -> list[str]:
        """Register the built-in tools into this registry (once); return their modules."""
        if self._builtins:
            return []
        self._builtins = True
        with registry_as_singleton(self.registry):
            # Imported modules are not executed again, so drop them (not the
            # package) and let discovery import them into this registry.
            self._modules.remember(BUILTIN_NAMESPACE + ".")
            for name in [n for n in sys.modules if n.startswith(BUILTIN_NAMESPACE + ".")]:
                del sys.modules[name]
            return discover_builtin_tools()

    def _host(self, config: Config) -> PluginHost:
        if self.host is None:
            self.host = PluginHost(self.registry, config)
            # So get_plugin_host(registry) and unload_plugin(id, registry=...) find it.
            _hosts[self.registry] = self.host
        else:
            self.host.config = config
        return self.host

    def close(self) -> None:
        if self.host is not None:
            self.host.unload_all()  # also stops its hook threads
            if _hosts.get(self.registry) is self.host:
                del _hosts[self.registry]
            self.host = None
        self._modules.restore()
