"""toolreg's plugin manager answers as pluggy does, for every name of every plugin shape.

``PackPluginManager.parse_hookimpl_opts`` answers "no hook" without pluggy's
static lookup for the plain names of plain modules. Each test here holds it to
plain pluggy's own answer (``pluggy.PluginManager`` with the same project
name), name by name over ``dir(plugin)``, and to the hook implementations
pluggy registers, including for plugins built to make the two differ.
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any

import pluggy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolreg.hookspecs as hookspecs
from toolreg import ToolRegistry, hookimpl
from toolreg._loaders.pack_hooks import PackPluginManager, new_manager

PLAIN = """
import functools, json, os
from toolreg import ToolRegistry, hookimpl, registry

SCHEMA = {"type": "object"}
NAMES = ("a", "b")
NUMBERS = [1, 2.5, 3j]
FLAG, NOTHING, RAW, SEEN, FROZEN = True, None, b"x", set(), frozenset()
count: int = 0  # module __annotations__
getcwd = os.getcwd
codec = json
other_registry = ToolRegistry()


def helper(args, **kwargs):
    return "x"


lam = lambda: None
partial = functools.partial(helper, {})


@hookimpl
def toolreg_configure(settings):
    pass


@hookimpl(optionalhook=True)
def toolreg_maybe_later():
    pass


class Helper:
    @hookimpl
    def toolreg_post_tool_call(self, name, args, result):
        pass


instance = Helper()
bound = instance.toolreg_post_tool_call
static = staticmethod(toolreg_configure)
klass = classmethod(toolreg_configure)
"""

# Plugins built to make a shortcut wrong: every answer must still be pluggy's.
HOSTILE = {
    "marker_through_func": PLAIN
    + """
def launders():
    pass
launders.__func__ = toolreg_configure  # pluggy reads the marker through __func__
""",
    "non_dict_markers": PLAIN
    + """
def odd():
    pass
odd.toolreg_impl = "not a dict"
def empty():
    pass
empty.toolreg_impl = {}
def odd_func():
    pass
odd_func.__func__ = 42
""",
    "dunder_keys": PLAIN
    + """
globals()["__class__"] = toolreg_configure
globals()["__dict__"] = helper
globals()["__toolreg_extra__"] = toolreg_configure
globals()["__plain__"] = helper
""",
    "getattr_raises": PLAIN
    + """
def __getattr__(name):
    raise RuntimeError("module __getattr__ ran for " + name)
""",
    "getattr_hands_out_hooks": PLAIN
    + """
def __getattr__(name):
    if name.startswith("toolreg_"):
        return toolreg_configure
    raise AttributeError(name)
""",
    "dir_names_absent": PLAIN
    + """
def __dir__():
    return ["toolreg_pre_tool_call", "ghost", "helper", "toolreg_configure", "SCHEMA"]
""",
    "module_subclass_property": PLAIN
    + """
import sys, types

class Special(types.ModuleType):
    @property
    def toolreg_pre_tool_call(self):
        raise RuntimeError("a property was evaluated")

    @property
    def helper(self):
        raise RuntimeError("a property was evaluated")

sys.modules[__name__].__class__ = Special
""",
}


def answers(pm: pluggy.PluginManager, plugin: Any) -> dict[str, Any]:
    """``parse_hookimpl_opts`` for every name of ``dir(plugin)`` (an exception's type if raised)."""
    found: dict[str, Any] = {}
    for name in dir(plugin):
        try:
            found[name] = pm.parse_hookimpl_opts(plugin, name)
        except Exception as exc:
            found[name] = type(exc)
    return found


def registered(pm: pluggy.PluginManager, plugin: Any) -> Any:
    """What registering ``plugin`` gives: each hook implementation, or the exception."""
    pm.add_hookspecs(hookspecs)
    try:
        pm.register(plugin, name="plugin")
    except Exception as exc:
        return type(exc), str(exc)
    return sorted(
        (
            caller.name,
            impl.function.__qualname__,
            getattr(impl.function, "__self__", None) is plugin,
            sorted(impl.opts.items()),
        )
        for caller in pm.get_hookcallers(plugin) or ()
        for impl in caller.get_hookimpls()
    )


def assert_parity(plugin: Any) -> None:
    fast, plain = PackPluginManager("toolreg"), pluggy.PluginManager("toolreg")
    assert answers(fast, plugin) == answers(plain, plugin)
    fast, plain = PackPluginManager("toolreg"), pluggy.PluginManager("toolreg")
    assert registered(fast, plugin) == registered(plain, plugin)


def test_a_plain_pack_module_answers_as_pluggy(make_package):
    module = make_package("hooks_plain", PLAIN)
    assert_parity(module)
    hooks = {name: opts for name, *_, opts in registered(PackPluginManager("toolreg"), module)}
    assert set(hooks) >= {"toolreg_configure", "toolreg_maybe_later", "bound"}


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_hostile_module_shapes_answer_as_pluggy(make_package, shape):
    assert_parity(make_package(f"hooks_{shape}", HOSTILE[shape]))


def test_a_module_class_and_an_instance_answer_as_pluggy(make_package):
    module = make_package("hooks_objects", PLAIN)

    class Sneaky:
        def __getattr__(self, name: str) -> Any:
            return module.toolreg_configure

        @hookimpl
        def toolreg_pre_tool_call(self, name: str, args: dict[str, Any]) -> None:
            return None

    for plugin in (module.Helper, module.instance, Sneaky(), Sneaky):
        assert_parity(plugin)


def test_a_laundered_marker_is_a_hook_for_both():
    """A function whose __dict__ names a marked __func__ is registered by pluggy: by us too."""
    module = types.ModuleType("hooks_launder")

    def launders(settings: Any) -> None:
        pass

    def marked(settings: Any) -> None:
        pass

    marked.toolreg_impl = {}  # type: ignore[attr-defined]
    launders.__func__ = marked  # type: ignore[attr-defined]
    module.toolreg_configure = launders  # type: ignore[attr-defined]
    assert PackPluginManager("toolreg").parse_hookimpl_opts(module, "toolreg_configure") == {}
    assert_parity(module)


def test_plain_names_never_reach_the_static_lookup(make_package, monkeypatch):
    """The point of the manager: a plain pack module costs pluggy no getattr_static."""
    module = make_package("hooks_counted", PLAIN)
    pm = new_manager()
    looked_up: list[str] = []
    real = inspect.getattr_static

    def counting(obj: Any, name: str, *default: Any) -> Any:
        looked_up.append(name)
        return real(obj, name, *default)

    monkeypatch.setattr(inspect, "getattr_static", counting)
    pm.register(module)
    # Only what may be a hook is asked: the marked functions, and what pluggy
    # may bind (classes, instances, a bound method, wrapped callables).
    assert set(looked_up) == {
        "toolreg_configure",
        "toolreg_maybe_later",
        "Helper",
        "ToolRegistry",
        "hookimpl",
        "instance",
        "bound",
        "static",
        "klass",
        "partial",
    }


# -- generated namespaces ----------------------------------------------------------


def _function(marker: Any, through_func: bool) -> types.FunctionType:
    def fn(settings: Any) -> None:
        pass

    if marker is not None:
        fn.toolreg_impl = marker  # type: ignore[attr-defined]
    if through_func:

        def inner(settings: Any) -> None:
            pass

        inner.toolreg_impl = {}  # type: ignore[attr-defined]
        fn.__func__ = inner  # type: ignore[attr-defined]
    return fn


class _StrSub(str):
    pass


class _Descriptor:
    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return self


_markers = st.sampled_from([None, {}, {"tryfirst": True}, "text", 0, []])
_values = st.one_of(
    st.builds(_function, _markers, st.booleans()),
    st.sampled_from(
        [
            "text",
            b"raw",
            1,
            2.5,
            True,
            None,
            (1,),
            [1],
            {"a": 1},
            {1},
            frozenset(),
            types,
            len,
            ToolRegistry(),
            _StrSub("sub"),
            _Descriptor(),
            int,
            functools.partial(len),
            staticmethod(_function({}, False)),
            classmethod(_function({}, False)),
            types.MethodType(_function({}, False), object()),
            types.MethodType(_function(None, False), object()),
        ]
    ),
)
_names = st.one_of(
    st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True),
    st.sampled_from(["__class__", "__dict__", "__annotations__", "__doc__", "__x__"]),
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_names, _values, max_size=12))
def test_generated_module_namespaces_answer_as_pluggy(namespace):
    module = types.ModuleType("hooks_generated")
    vars(module).update(namespace)
    assert_parity(module)
