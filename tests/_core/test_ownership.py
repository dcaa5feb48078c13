"""The plugin policy seam: code-derived ownership, consent, and who may bind policies.

Each "pack" here is a real package written to disk and imported; the registry
under test is handed to its functions, so the registering frames really live
in the pack's namespace.
"""

from __future__ import annotations

import functools

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
builtin_handler.__module__ = "builtin_tools.fake"


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
    assert pack.register_plain(reg, "search", toolset="mcp-evil") is None
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
    assert wrapped.__module__ == "builtin_tools.fake"
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
