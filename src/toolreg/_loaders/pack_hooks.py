"""A pack's hooks in pluggy: toolreg's plugin manager, and what the host asks of it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.machinery import ModuleSpec, SourceFileLoader
from types import BuiltinFunctionType, FunctionType, ModuleType
from typing import Any

import pluggy

import toolreg.hookspecs as hookspecs

from .._policy.unknown_names import did_you_mean
from .._registry.registry import ToolRegistry

# Values in which pluggy never finds a hook implementation, by exact type: no
# ``getattr_static`` result of theirs is a function, method, staticmethod or
# classmethod (pluggy 1.7), and none is a routine (``inspect.isroutine``,
# before 1.7) other than a builtin, which carries no marker. Subclasses, and
# every type not named here, are left to pluggy. Beside plain data: what every
# module's import sets (its spec and loader), and the registry nearly every
# pack module holds.
_NEVER_HOOKS = frozenset(
    {
        *(str, bytes, int, float, bool, complex, type(None)),
        *(tuple, list, dict, set, frozenset),
        ModuleType,
        BuiltinFunctionType,
        ModuleSpec,
        SourceFileLoader,
        ToolRegistry,
    }
)
_ABSENT = object()


# pluggy asks parse_hookimpl_opts about every name in dir(plugin), each answer an
# inspect.getattr_static since pluggy 1.7: answering the sure "no hook" here keeps
# registering a pack module cheap.
class PackPluginManager(pluggy.PluginManager):
    """pluggy's manager, with a quick "no hook here" for the plain names of plain modules."""

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        self._marker = project_name + "_impl"

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        # Only an exact module (no class of its own with properties, no module
        # __getattr__ or __dir__), and only a value in its own __dict__. Where
        # ModuleType or object defines the name too (__class__, __dict__,
        # __annotations__), pluggy reads that descriptor instead, and finds no
        # hook in it either.
        if type(plugin) is ModuleType and type(name) is str:
            # vars(), not .__dict__: once specialised, CPython 3.11's attribute
            # read on a module takes a "__dict__" key of the module's own.
            namespace = vars(plugin)
            if "__getattr__" not in namespace and "__dir__" not in namespace:
                value = namespace.get(name, _ABSENT)
                kind = type(value)
                if kind is FunctionType:
                    # pluggy reads the marker from the function's own __dict__,
                    # or from a __func__ found there.
                    own = vars(value)
                    if self._marker not in own and "__func__" not in own:
                        return None
                elif kind in _NEVER_HOOKS:
                    return None
        return super().parse_hookimpl_opts(plugin, name)


def new_manager() -> PackPluginManager:
    """A manager with toolreg's hook specifications."""
    pm = PackPluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    return pm


def check_hook_names(pm: pluggy.PluginManager, objects: Sequence[Any]) -> None:
    """A hook implementation whose name is no toolreg hook fails the pack, with the closest."""
    known = [*hookspecs.SETUP_HOOKS, *hookspecs.DISPATCH_HOOKS]
    for name, caller in vars(pm.hook).items():
        if caller.has_spec():
            continue
        for impl in caller.get_hookimpls():
            if not impl.optionalhook and any(impl.plugin is obj for obj in objects):
                raise pluggy.PluginValidationError(
                    impl.plugin,
                    f"{name!r} (in {impl.function.__module__}) is not a toolreg hook"
                    f"{did_you_mean(name, known)}",
                )
    pm.check_pending()


def call_own(pm: pluggy.PluginManager, objects: Sequence[Any], hook: str, **kwargs: Any) -> None:
    """Run one plugin's own implementations of a setup hook."""
    for impl in getattr(pm.hook, hook).get_hookimpls():
        if any(impl.plugin is obj for obj in objects):
            impl.function(**{name: kwargs[name] for name in impl.argnames})


def has_setup_hooks(pm: pluggy.PluginManager, objects: Sequence[Any]) -> bool:
    """Whether one of a plugin's objects implements a setup hook."""
    return any(
        impl.plugin is obj
        for hook in hookspecs.SETUP_HOOKS
        for impl in getattr(pm.hook, hook).get_hookimpls()
        for obj in objects
    )


def run_setup_hooks(
    pm: pluggy.PluginManager,
    objects: Sequence[Any],
    registry: ToolRegistry,
    settings: Mapping[str, Any],
) -> None:
    """A plugin's ``toolreg_configure`` and then its ``toolreg_register_tools``."""
    call_own(pm, objects, "toolreg_configure", settings=dict(settings))
    call_own(pm, objects, "toolreg_register_tools", registry=registry, settings=dict(settings))


def implements_dispatch_hook(pm: pluggy.PluginManager) -> bool:
    """Whether any registered plugin implements a dispatch hook."""
    return any(getattr(pm.hook, hook).get_hookimpls() for hook in hookspecs.DISPATCH_HOOKS)
