"""The public functions over plugin hosts: one host per registry, kept here.

``load_plugins``, ``unload_plugin``, ``reload_plugins`` and
``get_plugin_host`` default to ``toolreg.registry``, the name packs register
into, read when they are called.
"""

from __future__ import annotations

import weakref

from .._policy.config import Config, load_config
from .._registry.registry import ToolRegistry
from .plugins import PluginHost
from .report import PluginReport

_hosts: weakref.WeakKeyDictionary[ToolRegistry, PluginHost] = weakref.WeakKeyDictionary()


def get_plugin_host(registry: ToolRegistry | None = None) -> PluginHost | None:
    """The host that loaded plugins into ``registry`` (the singleton by default)."""
    import toolreg

    return _hosts.get(registry if registry is not None else toolreg.registry)


def load_plugins(
    config: Config | None = None, registry: ToolRegistry | None = None
) -> PluginReport:
    """Load every admitted tool pack into ``registry`` and report on each.

    ``config`` defaults to the operator config found by ``load_config()``;
    ``registry`` to ``toolreg.registry``. Calling it again loads packs that
    are new since, and leaves loaded ones as they are.
    """
    import toolreg

    target = registry if registry is not None else toolreg.registry
    host = _hosts.get(target)
    if host is None or (config is not None and config is not host.config):
        if host is not None:
            host.unload_all()
        host = PluginHost(target, config if config is not None else load_config())
        _hosts[target] = host
    return host.load_all()


def unload_plugin(plugin_id: str, registry: ToolRegistry | None = None) -> bool:
    """Unload one plugin by id; False when it is not loaded."""
    host = get_plugin_host(registry)
    return host.unload(plugin_id) if host is not None else False


def reload_plugins(
    config: Config | None = None, registry: ToolRegistry | None = None
) -> PluginReport:
    """Unload every plugin, then load them again (with ``config`` if given)."""
    import toolreg

    target = registry if registry is not None else toolreg.registry
    host = _hosts.get(target)
    if host is not None:
        host.unload_all()
        if config is None:
            config = host.config
        del _hosts[target]
    return load_plugins(config, target)
