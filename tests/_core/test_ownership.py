"""The plugin policy seam: code-derived ownership, consent, and who may bind policies.

Each "pack" here is a real package written to disk and imported; the registry
under test is handed to its functions, so the registering frames really live
in the pack's namespace.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
import types

import pytest

from conftest import schema
from toolreg import ToolRegistry

PACK = """
import functools

SCHEMA = {"parameters": {"type": "object", "properties": {}}}


def handler(args):
    return "pack"


def register_plain(reg, name, toolset="pack", override=False):
    return reg.register(name, toolset, SCHEMA, handler, override=override)


def register_lambda(reg, name):
    return reg.register(name, "pack", SCHEMA, lambda args: "lambda", override=True)


def register_borrowed(reg, name, borrowed):
    return reg.register(name, "pack", SCHEMA, borrowed, override=True)


def register_partial(reg, name, borrowed):
    return reg.register(name, "pack", SCHEMA, functools.partial(borrowed), override=True)


def make_wrapped(borrowed):
    @functools.wraps(borrowed)
    def wrapper(args):
        return "wrapped"
    return wrapper


def register_with(reg, name, handler, **options):
    return reg.register(name, "pack", SCHEMA, handler or (lambda args: "pack"), **options)


def grant_myself(reg, namespace):
    return reg.register_plugin_override_policy(namespace, True)


def deregister(reg, name):
    return reg.deregister(name)


class Tool:
    def __call__(self, args):
        return "object"

    def run(self, args):
        return "method"
"""


def builtin_handler(args: dict) -> str:
    return "builtin"


# Ownership is read off the code: this makes the handler look like it was
# defined in the built-in tools package, as the real built-ins are.
builtin_handler.__module__ = "toolreg.builtin_tools.fake"


@pytest.fixture
def pack(make_package):
    return make_package("acme_pack", PACK)


@pytest.fixture
def with_builtin(reg: ToolRegistry) -> ToolRegistry:
    reg.register("terminal", "terminal", schema("terminal"), builtin_handler)
    assert reg.get_owner("terminal") == "builtin"
    return reg


def test_policy_object_is_returned_and_kept(reg, pack):
    policy = reg.register_plugin_override_policy("acme_pack", False, plugin_id="toolreg-acme")
    assert (policy.namespace, policy.allowed, policy.plugin_id) == (
        "acme_pack",
        False,
        "toolreg-acme",
    )
    assert policy.config_key == "plugins.entries.toolreg-acme.allow_tool_override"
    assert reg.get_plugin_policy("acme_pack") == policy


def test_plugin_owns_what_it_registers(reg, pack):
    reg.register_plugin_override_policy("acme_pack", False, plugin_id="toolreg-acme")
    pack.register_plain(reg, "acme_tool")
    assert reg.get_owner("acme_tool") == "toolreg-acme"


def test_override_without_consent_raises_naming_tool_pack_and_key(with_builtin, pack):
    reg = with_builtin
    reg.register_plugin_override_policy("acme_pack", False, plugin_id="toolreg-acme")
    before = reg.generation
    with pytest.raises(PermissionError) as info:
        pack.register_plain(reg, "terminal", override=True)
    message = str(info.value)
    assert "'terminal'" in message and "toolreg-acme" in message
    assert "plugins.entries.toolreg-acme.allow_tool_override" in message
    assert reg.dispatch("terminal", {}) == "builtin"
    assert reg.generation == before
    assert reg.decisions()[-1].action == "rejected"


def test_override_with_consent_replaces(with_builtin, pack):
    reg = with_builtin
    reg.register_plugin_override_policy("acme_pack", True, plugin_id="toolreg-acme")
    pack.register_plain(reg, "terminal", override=True)
    assert reg.dispatch("terminal", {}) == "pack"
    decision = reg.decisions()[-1]
    assert (decision.action, decision.owner, decision.previous_owner) == (
        "overridden",
        "toolreg-acme",
        "builtin",
    )


def test_conflict_without_override_is_rejected_even_with_consent(with_builtin, pack):
    reg = with_builtin
    reg.register_plugin_override_policy("acme_pack", True)
    assert pack.register_plain(reg, "terminal") is None
    assert reg.dispatch("terminal", {}) == "builtin"


def test_claiming_the_builtins_toolset_is_still_an_override(with_builtin, pack):
    """Same toolset name is a reload only for the same owner, not a free pass."""
    reg = with_builtin
    reg.register_plugin_override_policy("acme_pack", False)
    assert pack.register_plain(reg, "terminal", toolset="terminal") is None
    with pytest.raises(PermissionError):
        pack.register_plain(reg, "terminal", toolset="terminal", override=True)
    assert reg.dispatch("terminal", {}) == "builtin"


def test_plugin_may_not_claim_mcp_refresh_exemption(reg, pack):
    reg.register("search", "mcp-server", {}, builtin_handler)
    reg.register_plugin_override_policy("acme_pack", False)
    with pytest.raises(PermissionError, match="belong to MCP servers alone"):
        pack.register_plain(reg, "search", toolset="mcp-evil")
    assert reg.get_entry("search").toolset == "mcp-server"


@pytest.mark.parametrize("how", ["lambda", "borrowed", "partial", "wraps"])
def test_laundering_does_not_hide_the_plugin(with_builtin, pack, how):
    reg = with_builtin
    reg.register_plugin_override_policy("acme_pack", False, plugin_id="toolreg-acme")
    with pytest.raises(PermissionError, match="toolreg-acme"):
        if how == "lambda":
            pack.register_lambda(reg, "terminal")
        elif how == "borrowed":
            pack.register_borrowed(reg, "terminal", builtin_handler)
        elif how == "partial":
            pack.register_partial(reg, "terminal", builtin_handler)
        else:
            pack.register_borrowed(reg, "terminal", pack.make_wrapped(builtin_handler))
    assert reg.dispatch("terminal", {}) == "builtin"


@pytest.mark.parametrize(
    "make_handler",
    [
        lambda pack: functools.partial(pack.handler),
        lambda pack: functools.partial(functools.partial(pack.handler)),
        lambda pack: pack.Tool(),
        lambda pack: pack.Tool().run,
    ],
    ids=["partial", "nested-partial", "callable-object", "bound-method"],
)
def test_pack_handler_registered_from_host_code_is_still_the_packs(
    with_builtin, pack, make_handler
):
    """Host code handing a pack's handler to register cannot strip its ownership."""
    reg = with_builtin
    reg.register_plugin_override_policy("acme_pack", False, plugin_id="toolreg-acme")
    handler = make_handler(pack)
    with pytest.raises(PermissionError):
        reg.register("terminal", "pack", {}, handler, override=True)


def test_wraps_is_seen_through_by_source_file(with_builtin, pack):
    """functools.wraps copies __module__ from the built-in; the code's file gives it away."""
    reg = with_builtin
    reg.register_plugin_override_policy("acme_pack", False, plugin_id="toolreg-acme")
    wrapped = pack.make_wrapped(builtin_handler)
    assert wrapped.__module__ == "toolreg.builtin_tools.fake"
    with pytest.raises(PermissionError):
        reg.register("terminal", "pack", {}, wrapped, override=True)


def test_plugin_cannot_grant_itself_consent(reg, pack):
    reg.register_plugin_override_policy("acme_pack", False, plugin_id="toolreg-acme")
    with pytest.raises(PermissionError, match="toolreg-acme"):
        pack.grant_myself(reg, "acme_pack")
    with pytest.raises(PermissionError):
        pack.grant_myself(reg, "some_other_namespace")
    assert reg.get_plugin_policy("acme_pack").allowed is False


def test_host_may_change_a_policy(with_builtin, pack):
    reg = with_builtin
    reg.register_plugin_override_policy("acme_pack", False)
    reg.register_plugin_override_policy("acme_pack", True)
    pack.register_plain(reg, "terminal", override=True)
    assert reg.dispatch("terminal", {}) == "pack"


@pytest.mark.parametrize("namespace", ["toolreg", "builtin_tools", "builtin_tools.x", "", "a-b"])
def test_reserved_or_invalid_namespaces_cannot_be_bound(reg, namespace):
    with pytest.raises(ValueError):
        reg.register_plugin_override_policy(namespace, True)


def test_plugin_may_deregister_only_its_own_tools(with_builtin, pack):
    reg = with_builtin
    reg.register_plugin_override_policy("acme_pack", False, plugin_id="toolreg-acme")
    pack.register_plain(reg, "acme_tool")
    with pytest.raises(PermissionError, match="terminal"):
        pack.deregister(reg, "terminal")
    assert reg.get_entry("terminal") is not None
    assert pack.deregister(reg, "acme_tool") is True


def test_plugin_allowed_overrides_may_deregister_others(with_builtin, pack):
    reg = with_builtin
    reg.register_plugin_override_policy("acme_pack", True)
    assert pack.deregister(reg, "terminal") is True


def test_a_pack_may_not_deregister_an_mcp_servers_tool(reg, pack):
    # The server's own refresh repaves its toolset; a pack is not that server.
    reg.register("mcp__s__x", "mcp-s", {}, builtin_handler)
    reg.register_plugin_override_policy("acme_pack", False)
    with pytest.raises(PermissionError, match="owned by mcp:s"):
        pack.deregister(reg, "mcp__s__x")
    assert reg.get_owner("mcp__s__x") == "mcp:s"


def test_unbound_code_is_host_and_mcp_toolsets_are_their_server(reg, pack):
    reg.register_plugin_override_policy("acme_pack", False)
    reg.register("t", "alpha", {}, lambda args: "x")
    reg.register("mcp__s__t", "mcp-s", {}, lambda args: "x")
    assert reg.get_owner("t") == "host"
    assert reg.get_owner("mcp__s__t") == "mcp:s"


def test_remove_owner_restores_what_the_plugin_overrode(with_builtin, pack):
    reg = with_builtin
    reg.register_plugin_override_policy("acme_pack", True, plugin_id="toolreg-acme")
    pack.register_plain(reg, "terminal", override=True)
    pack.register_plain(reg, "acme_tool")
    assert reg.remove_owner("toolreg-acme") == ["acme_tool", "terminal"]
    assert reg.dispatch("terminal", {}) == "builtin"
    assert reg.get_owner("terminal") == "builtin"
    assert reg.get_entry("acme_tool") is None
    assert reg.decisions()[-1].action in {"restored", "deregistered"}


def test_remove_owner_does_not_restore_over_a_newer_entry(with_builtin, pack):
    reg = with_builtin
    reg.register_plugin_override_policy("acme_pack", True, plugin_id="toolreg-acme")
    pack.register_plain(reg, "terminal", override=True)
    reg.register("terminal", "host-ts", {}, lambda args: "host", override=True)
    assert reg.remove_owner("toolreg-acme") == []
    assert reg.dispatch("terminal", {}) == "host"


def test_remove_owner_out_of_order_never_brings_back_an_unloaded_plugin(
    with_builtin, pack, make_package
):
    reg = with_builtin
    second = make_package("beta_pack", PACK)
    reg.register_plugin_override_policy("acme_pack", True, plugin_id="toolreg-acme")
    reg.register_plugin_override_policy("beta_pack", True, plugin_id="toolreg-beta")
    pack.register_plain(reg, "terminal", override=True)
    second.register_plain(reg, "terminal", toolset="beta", override=True)
    assert reg.get_owner("terminal") == "toolreg-beta"

    # The first overrider goes while the second still stands: nothing changes now...
    assert reg.remove_owner("toolreg-acme") == []
    assert reg.get_owner("terminal") == "toolreg-beta"
    # ...and when the second goes too, the built-in is back, not the first pack's tool.
    assert reg.remove_owner("toolreg-beta") == ["terminal"]
    assert reg.get_owner("terminal") == "builtin"
    assert reg.dispatch("terminal", {}) == "builtin"


def test_remove_owner_drops_a_plugin_tool_that_another_plugin_overrode(reg, pack, make_package):
    second = make_package("beta_pack", PACK)
    reg.register_plugin_override_policy("acme_pack", True, plugin_id="toolreg-acme")
    reg.register_plugin_override_policy("beta_pack", True, plugin_id="toolreg-beta")
    pack.register_plain(reg, "acme_tool")
    second.register_plain(reg, "acme_tool", toolset="beta", override=True)

    assert reg.remove_owner("toolreg-acme") == []
    assert reg.remove_owner("toolreg-beta") == ["acme_tool"]
    assert reg.get_entry("acme_tool") is None


# -- the per-file memo across binds ---------------------------------------------------------
# A file's owner is worked out once and kept; each bind or unbind drops only the
# answers it can change. Each test below lets the registry see a file first, then
# changes the policies, and checks the file's next registration is judged afresh.


@pytest.mark.parametrize("first", ["host", "directory"])
def test_a_file_is_the_packs_once_its_record_lists_it_whoever_had_it_before(
    reg, make_package, first
):
    # Seen first as host code (the host imported the module before the loader
    # bound it), or as the pack's whose directory holds it: a RECORD bound
    # later is exact, and the earlier answer must go.
    pack = make_package(f"{first}_first_pack", PACK)
    if first == "directory":
        reg.register_plugin_override_policy(f"{first}_first_pack", True, plugin_id="toolreg-dir")
    else:
        reg.register_plugin_override_policy("unrelated_pack", False, paths=[])
    pack.register_plain(reg, "seen_first")
    assert reg.get_owner("seen_first") == ("host" if first == "host" else "toolreg-dir")

    reg.register_plugin_override_policy(
        "recorded_pack", False, plugin_id="toolreg-recorded", paths=[], files=[pack.__file__]
    )
    pack.register_plain(reg, "seen_later")
    assert reg.get_owner("seen_later") == "toolreg-recorded"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX symlinks")
def test_a_record_bound_later_takes_a_file_the_code_spells_through_a_symlink(reg, tmp_path):
    # The code object names the file through a symlinked folder, the RECORD by
    # its real path: the answer kept under the code's spelling must go all the same.
    (tmp_path / "real_site" / "linked_pack").mkdir(parents=True)
    source = tmp_path / "real_site" / "linked_pack" / "__init__.py"
    source.write_text(PACK)
    (tmp_path / "linked_site").symlink_to(tmp_path / "real_site")
    sys.path.insert(0, str(tmp_path / "linked_site"))
    try:
        importlib.invalidate_caches()
        module = importlib.import_module("linked_pack")
        assert module.__file__.startswith(str(tmp_path / "linked_site"))
        reg.register_plugin_override_policy("unrelated_pack", False, paths=[])
        module.register_plain(reg, "seen_first")
        reg.register_plugin_override_policy(
            "recorded_pack", False, plugin_id="toolreg-recorded", paths=[], files=[str(source)]
        )
        module.register_plain(reg, "seen_later")
    finally:
        sys.path.remove(str(tmp_path / "linked_site"))
        sys.modules.pop("linked_pack", None)
    assert [reg.get_owner(n) for n in ("seen_first", "seen_later")] == ["host", "toolreg-recorded"]


def test_a_directory_bound_later_does_not_take_a_file_a_record_gave(reg, make_package):
    pack = make_package("kept_pack", PACK)
    reg.register_plugin_override_policy(
        "recorder_pack", False, plugin_id="toolreg-recorder", paths=[], files=[pack.__file__]
    )
    pack.register_plain(reg, "first")
    reg.register_plugin_override_policy("kept_pack", True, plugin_id="toolreg-kept")
    pack.register_plain(reg, "second")
    assert reg.get_owner("first") == reg.get_owner("second") == "toolreg-recorder"


def test_unbinding_a_pack_forgets_its_files_and_no_one_elses(reg, make_package):
    first, second = make_package("first_pack", PACK), make_package("second_pack", PACK)
    reg.register_plugin_override_policy(
        "first_pack", False, plugin_id="toolreg-first", paths=[], files=[first.__file__]
    )
    reg.register_plugin_override_policy(
        "second_pack", False, plugin_id="toolreg-second", paths=[], files=[second.__file__]
    )
    first.register_plain(reg, "a1")
    second.register_plain(reg, "b1")

    reg.remove_plugin_override_policy("first_pack")
    first.register_plain(reg, "a2")
    second.register_plain(reg, "b2")
    assert [reg.get_owner(n) for n in ("a1", "a2", "b1", "b2")] == [
        "toolreg-first",
        "host",
        "toolreg-second",
        "toolreg-second",
    ]


def test_unbinding_the_record_owner_hands_the_file_to_the_directory_owner(reg, make_package):
    pack = make_package("shared_pack", PACK)
    reg.register_plugin_override_policy(
        "record_pack", False, plugin_id="toolreg-record", paths=[], files=[pack.__file__]
    )
    reg.register_plugin_override_policy("shared_pack", True, plugin_id="toolreg-shared")
    pack.register_plain(reg, "while_recorded")
    reg.remove_plugin_override_policy("record_pack")
    pack.register_plain(reg, "after_unbind")
    assert reg.get_owner("while_recorded") == "toolreg-record"
    assert reg.get_owner("after_unbind") == "toolreg-shared"


def test_rebinding_a_namespace_to_other_files_releases_the_old_ones(with_builtin, make_package):
    reg = with_builtin
    old, new = make_package("old_files", PACK), make_package("new_files", PACK)
    reg.register_plugin_override_policy(
        "moving_pack", False, plugin_id="toolreg-moving", paths=[], files=[old.__file__]
    )
    old.register_plain(reg, "before")
    reg.register_plugin_override_policy(
        "moving_pack", True, plugin_id="toolreg-moving", paths=[], files=[new.__file__]
    )
    old.register_plain(reg, "after")
    new.register_plain(reg, "terminal", override=True)  # the new decision applies at once
    assert [reg.get_owner(n) for n in ("before", "after", "terminal")] == [
        "toolreg-moving",
        "host",
        "toolreg-moving",
    ]


def test_a_pack_bound_before_its_code_exists_is_found_after_other_code_was_seen(reg, make_package):
    reg.register_plugin_override_policy("later_pack", False, plugin_id="toolreg-later")
    host = make_package("host_side", PACK)
    host.register_plain(reg, "host_tool")  # the memo now holds this test's frames
    later = make_package("later_pack", PACK)
    later.register_plain(reg, "later_tool")
    assert reg.get_owner("host_tool") == "host"
    assert reg.get_owner("later_tool") == "toolreg-later"
    with pytest.raises(PermissionError, match="toolreg-later"):
        later.grant_myself(reg, "later_pack")


def test_a_pack_whose_code_ran_before_it_could_be_found_is_found_at_the_next_bind(
    reg, make_package, tmp_path
):
    # Its file ran while its namespace was not importable (so: host code then);
    # once it is, the next bind locates it and the file's answer is revised.
    reg.register_plugin_override_policy("hidden_pack", False, plugin_id="toolreg-hidden")
    hidden = tmp_path / "elsewhere" / "hidden_pack"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text(PACK)
    spec = importlib.util.spec_from_file_location("not_yet_hidden", hidden / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.register_plain(reg, "unfound")
    assert reg.get_owner("unfound") == "host"

    sys.path.insert(0, str(hidden.parent))
    try:
        importlib.invalidate_caches()
        reg.register_plugin_override_policy("unrelated_pack", False, paths=[])
        module.register_plain(reg, "found")
    finally:
        sys.path.remove(str(hidden.parent))
    assert reg.get_owner("found") == "toolreg-hidden"


@pytest.mark.parametrize("module", [5, None, "toolreg.builtin_tools.fake"])
def test_a_plain_functions_module_is_only_a_hint(reg, pack, module):
    # Plain functions take a shortcut through the unwrapping; what they claim
    # as __module__ (even a non-string) changes nothing about whose file it is.
    reg.register_plugin_override_policy("acme_pack", False, plugin_id="toolreg-acme")
    pack.handler.__module__ = module
    reg.register("from_host", "t", {}, pack.handler)
    assert reg.get_owner("from_host") == "toolreg-acme"

    def host_handler(args):
        return "host"

    host_handler.__module__ = module
    reg.register("host_tool", "t", {}, host_handler)
    builtin = module == "toolreg.builtin_tools.fake"
    assert reg.get_owner("host_tool") == ("builtin" if builtin else "host")


# -- built-in code on the stack ---------------------------------------------------
#
# With no pack involved, a write is the built-ins' when a built-in module's code
# is anywhere on the stack, else the host's. The walk remembers frames it found
# clear (they stay clear while they run); these try to make it remember wrongly.

BUILTIN_CODE = """
def call(fn, *args):
    return fn(*args)
"""


def builtin_call():
    """``call(fn, *args)``, run by code whose module is a built-in one (the walk reads that)."""
    namespace = {"__name__": "toolreg.builtin_tools.on_stack"}
    exec(compile(BUILTIN_CODE, "<builtin-on-stack>", "exec"), namespace)
    return namespace["call"]


def host_handler(args):
    return "host"


def register_via(reg, name):
    return reg.register(name, "t", {}, host_handler)


def writing_generator(reg):
    while True:
        reg.register((yield), "t", {}, host_handler)


def generator_through_a_helper(reg):
    while True:
        register_via(reg, (yield))


@types.coroutine
def _pause():
    return (yield)


async def writing_coroutine(reg):
    while True:
        reg.register(await _pause(), "t", {}, host_handler)


@pytest.fixture(params=["no pack bound", "a pack bound"])
def host_reg(request, reg, pack):
    if request.param == "a pack bound":  # the stack is walked for packs first
        reg.register_plugin_override_policy("acme_pack", False, plugin_id="toolreg-acme")
    return reg


def test_builtin_code_anywhere_on_the_stack_makes_the_write_builtin(host_reg):
    reg, call = host_reg, builtin_call()
    for n in range(3):  # again and again from the same frames, which the walk remembers
        register_via(reg, f"host_{n}")
        call(reg.register, f"direct_{n}", "t", {}, host_handler)
        call(register_via, reg, f"helper_{n}")
        call(call, register_via, reg, f"deeper_{n}")
        reg.register(f"here_{n}", "t", {}, host_handler)
    owners = {name: reg.get_owner(name) for name in reg.get_all_tool_names()}
    assert owners == {
        name: ("host" if name.startswith(("host_", "here_")) else "builtin") for name in owners
    }
    # Built-in code reloading a host tool takes it over (one party): the owner is stored anew.
    call(register_via, reg, "host_0")
    assert reg.get_owner("host_0") == "builtin"
    register_via(reg, "host_0")
    assert reg.get_owner("host_0") == "host"


@pytest.mark.parametrize(
    "writer", [writing_generator, generator_through_a_helper, writing_coroutine]
)
def test_a_suspended_frame_resumed_under_builtin_code_is_walked_again(host_reg, writer):
    # A generator's or coroutine's frame is the same object at each resume, but
    # the stack under it is whoever resumed it: no walk may stop there.
    reg, call = host_reg, builtin_call()
    running = writer(reg)
    running.send(None)
    expected = {}
    for n in range(3):
        running.send(f"host_{n}")
        call(running.send, f"builtin_{n}")
        expected |= {f"host_{n}": "host", f"builtin_{n}": "builtin"}
    assert {name: reg.get_owner(name) for name in expected} == expected


def test_a_host_loop_writing_again_is_judged_afresh_after_anything_it_read_changed(reg, pack):
    # A loop registering from one running frame reuses its last answer; each
    # thing that answer came from, changed between two writes, must be seen.
    def handler(args):
        return "host"

    for _ in range(2):  # the second time from the remembered answer
        reg.register("tool", "t", {}, handler)
    assert reg.get_owner("tool") == "host"

    handler.__module__ = "toolreg.builtin_tools.fake"
    reg.register("tool", "t", {}, handler)
    assert reg.get_owner("tool") == "builtin"

    handler.__module__ = __name__
    reg.register("tool", "t", {}, handler)
    handler.__wrapped__ = builtin_handler  # a layer of built-in code
    reg.register("tool", "t", {}, handler)
    assert reg.get_owner("tool") == "builtin"
    del handler.__wrapped__

    reg.register("mcp_tool", "mcp-docs", {}, handler)
    assert reg.get_owner("mcp_tool") == "mcp:docs"
    reg.register("tool", "t", {}, handler)
    assert reg.get_owner("tool") == "host"

    # A pack bound meanwhile owns its own handler, registered from this same frame.
    reg.register_plugin_override_policy("acme_pack", True, plugin_id="toolreg-acme")
    reg.register("acme_tool", "acme", {}, pack.handler)
    assert reg.get_owner("acme_tool") == "toolreg-acme"
    reg.register("tool", "t", {}, handler)
    assert reg.get_owner("tool") == "host"

    call = builtin_call()
    call(reg.register, "tool", "t", {}, handler)  # built-in code now on the stack
    assert reg.get_owner("tool") == "builtin"


# -- code a pack hands over runs as the pack's ---------------------------------
# The callables below live in this test module: to the stack they are host code,
# as code a pack loads from outside its files would be. Handed over by the pack,
# they run as the pack's.


def _take_terminal(reg: ToolRegistry) -> str:
    reg.register("terminal", "pack", schema("terminal"), lambda args: "taken", override=True)
    return "taken"


@pytest.mark.parametrize(
    "via", ["handler", "handler on a worker (timeout)", "check_fn", "dynamic_schema_overrides"]
)
def test_a_callable_the_pack_handed_over_writes_as_the_pack(with_builtin, pack, via):
    reg = with_builtin
    reg.register_plugin_override_policy("acme_pack", False, plugin_id="toolreg-acme")
    attempts: list[BaseException | str] = []

    def laundered(*args: object) -> str:
        try:
            return _take_terminal(reg)
        except PermissionError as exc:
            attempts.append(exc)
            raise

    if via.startswith("handler"):
        options = {"timeout": 5.0} if "worker" in via else {}
        pack.register_with(reg, "acme_tool", laundered, **options)
        result = reg.dispatch("acme_tool", {})
        assert "PermissionError" in result
    else:
        pack.register_with(reg, "acme_tool", None, **{via: laundered})
        reg.get_definitions()
    assert attempts and "toolreg-acme" in str(attempts[0]), attempts
    assert "allow_tool_override" in str(attempts[0])
    assert reg.get_owner("terminal") == "builtin"
    assert reg.dispatch("terminal", {}) == "builtin"


def test_tasks_and_callbacks_a_pack_handler_schedules_run_as_the_pack(with_builtin, pack):
    import asyncio

    reg = with_builtin
    reg.register_plugin_override_policy("acme_pack", False, plugin_id="toolreg-acme")
    outcomes: list[str] = []

    def later() -> None:
        try:
            outcomes.append(_take_terminal(reg))
        except PermissionError as exc:
            outcomes.append(str(exc))

    async def schedules(args: dict) -> str:
        loop = asyncio.get_running_loop()
        loop.call_soon(later)
        loop.create_task(asyncio.to_thread(later))
        return "scheduled"

    pack.register_with(reg, "acme_async", schedules, is_async=True)

    async def host() -> str:
        result = await reg.adispatch("acme_async", {})
        for _ in range(50):  # the callback, then the task's thread
            if len(outcomes) == 2:
                break
            await asyncio.sleep(0.02)
        return result

    assert asyncio.run(host()) == "scheduled"
    assert len(outcomes) == 2 and all("toolreg-acme" in o for o in outcomes), outcomes
    assert reg.get_owner("terminal") == "builtin"


def test_host_code_registered_for_a_pack_runs_as_the_hosts(reg, pack):
    """``acting_for`` (an isolated pack's tools): the handler is host code, and may do
    what only the host may; the same handler handed over by the pack may not."""
    policy = reg.register_plugin_override_policy("acme_pack", False, plugin_id="toolreg-acme")

    def host_only(args: dict) -> str:
        reg.register_plugin_override_policy("other_ns", False, paths=[])
        return "host did it"

    with reg.acting_for(policy):
        reg.register("relayed", "pack", schema("relayed"), host_only)
    assert reg.get_owner("relayed") == "toolreg-acme"
    assert reg.dispatch("relayed", {}) == "host did it"
    pack.register_with(reg, "handed", host_only)
    refused = reg.dispatch("handed", {})
    assert "PermissionError" in refused and "toolreg-acme" in refused


def test_a_plain_host_tool_runs_with_no_pack_in_its_context(reg):
    def registers(args: dict) -> str:
        reg.register("made_by_host", "host", schema("made_by_host"), lambda args: "ok")
        return "ok"

    reg.register("host_tool", "host", schema("host_tool"), registers)
    assert reg.dispatch("host_tool", {}) == "ok"
    assert reg.get_owner("made_by_host") == "host"
