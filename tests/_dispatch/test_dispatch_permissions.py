"""The operator's permissions in dispatch: one check after validation, approvers, records."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from toolreg import ToolRegistry

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}


class Traced:
    """A registry with tools that note every run of their handler."""

    def __init__(self, **options):
        self.reg = ToolRegistry(**options)
        self.ran: list[tuple[str, dict]] = []

    def add(self, name, toolset="t", **options):
        def handler(args, **kwargs):
            self.ran.append((name, dict(args), dict(kwargs)))
            return f"{name} ran"

        schema = {"name": name, "description": "d", "parameters": SCHEMA}
        self.reg.register(name, toolset, schema, handler, **options)


@pytest.fixture
def traced():
    t = Traced()
    for name in ("terminal", "write_file", "read_file"):
        t.add(name)
    t.reg.set_permissions(
        {"deny": ["terminal"], "ask": ["write_file"], "allow": ["read_file"], "default": "deny"}
    )
    return t


def error(result):
    return json.loads(result)


def test_a_denied_call_names_the_rule_and_its_handler_never_runs(traced):
    result = error(traced.reg.dispatch("terminal", {"path": "x"}))
    assert result == {
        "error": "denied by the operator's rule 'terminal'",
        "error_type": "denied",
        "code": "denied",
        "tool": "terminal",
        "rule": "terminal",
    }
    assert traced.ran == []
    assert traced.reg.dispatch("read_file", {}) == "read_file ran"


def test_the_default_denies_what_no_rule_names(traced):
    traced.add("other")
    result = error(traced.reg.dispatch("other", {}))
    assert result["code"] == "denied" and result["rule"] is None
    assert result["error"] == 'denied by the operator\'s default ("deny")'
    assert traced.ran == []


def test_every_route_of_dispatch_is_checked(traced):
    reg = traced.reg
    denied = [
        reg.dispatch("terminal", {}),
        reg.dispatch("terminal", '{"path": "x"}'),
        reg.dispatch("terminal", {}, progress=lambda *a: None),
        asyncio.run(reg.adispatch("terminal", {})),
        *reg.dispatch_many([("terminal", {}), ("terminal", {}, "id")]),
        *reg.dispatch_many([("terminal", {})], progress=lambda *a: None),
        *asyncio.run(reg.adispatch_many([("terminal", {}), ("terminal", {}, "id")])),
    ]
    for _ in range(40):  # past dispatch_many's timing sample: quick tools run inline
        denied += reg.dispatch_many([("terminal", {}), ("terminal", {})])
    assert {error(r)["code"] for r in denied} == {"denied"}
    assert traced.ran == []


def test_a_timed_tool_and_an_async_tool_are_checked_too():
    t = Traced()
    t.add("slow", timeout=5)

    async def handler(args):
        t.ran.append(("async", args, {}))
        return "ran"

    t.reg.register(
        "async_tool", "t", {"name": "async_tool", "parameters": SCHEMA}, handler, is_async=True
    )
    t.reg.set_permissions({"deny": ["slow", "async_tool"]})
    for name in ("slow", "async_tool"):
        assert error(t.reg.dispatch(name, {}))["code"] == "denied"
        assert error(asyncio.run(t.reg.adispatch(name, {})))["code"] == "denied"
    assert t.ran == []


def test_arguments_are_validated_before_the_rules_are_read(traced):
    result = error(traced.reg.dispatch("terminal", {"path": 3}))
    assert result["error_type"] == "invalid_arguments"
    assert [d for d in traced.reg.decisions() if d.action == "denied"] == []
    result = error(traced.reg.dispatch("terminal", "{not json"))
    assert result["error_type"] == "invalid_arguments"


def test_argument_rules_see_json_string_arguments_parsed():
    t = Traced()
    t.add("write_file")
    t.reg.set_permissions({"deny": ["write_file(path=/etc/*)"]})
    assert error(t.reg.dispatch("write_file", '{"path": "/etc/passwd"}'))["code"] == "denied"
    assert t.reg.dispatch("write_file", '{"path": "/tmp/x"}') == "write_file ran"


class Hooks:
    def __init__(self):
        self.seen = []

    def before(self, name, args):
        self.seen.append(("before", name, args))
        return None

    def after(self, name, args, result):
        self.seen.append(("after", name, result))
        return result


def test_permissions_run_before_the_hooks_which_see_parsed_valid_arguments(traced):
    hooks = Hooks()
    traced.reg.set_dispatch_hooks(hooks)
    assert error(traced.reg.dispatch("terminal", {}))["code"] == "denied"
    assert hooks.seen == [], "a denied call never reaches the hooks"
    assert traced.reg.dispatch("read_file", '{"path": "a"}') == "read_file ran"
    assert hooks.seen[0] == ("before", "read_file", {"path": "a"})
    assert error(traced.reg.dispatch("read_file", {"path": 1}))["error_type"] == "invalid_arguments"
    assert len(hooks.seen) == 2, "invalid arguments stop before the hooks"
    assert error(asyncio.run(traced.reg.adispatch("terminal", {})))["code"] == "denied"
    assert len(hooks.seen) == 2


def test_under_permissions_no_hot_entry_reaches_the_handler_unchecked():
    t = Traced()
    t.add("read_file")
    t.reg.dispatch("read_file", {})
    dispatcher = t.reg._dispatcher
    handler = dispatcher._plans["read_file"].handler
    assert dispatcher.hot["read_file"][1] is handler, "plain: the handler is called right away"
    t.reg.set_permissions({"deny": ["read_file"]})
    assert dispatcher.hot == {}
    for _ in range(3):
        assert error(t.reg.dispatch("read_file", {}))["code"] == "denied"
    assert dispatcher.hot["read_file"][1] is not handler, "its hot entry is the checked call"
    assert len(t.ran) == 1, "only the call before the rules ran"
    t.reg.set_permissions(None)
    assert t.reg.dispatch("read_file", {}) == "read_file ran"
    assert dispatcher.hot["read_file"][1] is handler


def test_a_table_write_rebuilds_what_a_tool_is_matched_against():
    t = Traced()
    t.add("fetch", toolset="web")
    t.reg.set_permissions({"deny": ["toolset:web"]})
    assert error(t.reg.dispatch("fetch", {}))["code"] == "denied"
    t.reg.deregister("fetch")
    t.add("fetch", toolset="local")
    assert t.reg.dispatch("fetch", {}) == "fetch ran"


# -- ask: approvers ----------------------------------------------------------------------


def test_ask_without_an_approver_is_denied_with_how_to_approve(traced):
    result = error(traced.reg.dispatch("write_file", {"path": "a"}))
    assert result["code"] == result["error_type"] == "approval_required"
    assert "registry.set_approver(fn)" in result["error"] and "approve=fn" in result["error"]
    assert traced.ran == []


@pytest.mark.parametrize(
    ("answer", "allowed", "reason"),
    [
        ("allow", True, ""),
        ("deny", False, "the approver said deny"),
        (("deny", "not today"), False, "not today"),
        ("ALLOW", False, "is not 'allow'"),
        (("allow", "sure"), False, "is not 'allow'"),
        (True, False, "is not 'allow'"),
        (None, False, "is not 'allow'"),
    ],
)
def test_only_allow_allows(traced, answer, allowed, reason):
    asked = []

    def approver(name, arguments, rule):
        asked.append((name, arguments, rule))
        return answer

    traced.reg.set_approver(approver)
    result = traced.reg.dispatch("write_file", {"path": "a"})
    assert asked == [("write_file", {"path": "a"}, "write_file")]
    if allowed:
        assert result == "write_file ran"
    else:
        assert error(result)["code"] == "denied" and reason in error(result)["error"]
        assert traced.ran == []


def test_an_approver_that_raises_denies(traced):
    def approver(name, arguments, rule):
        raise RuntimeError("approver broke")

    traced.reg.set_approver(approver)
    result = error(traced.reg.dispatch("write_file", {}))
    assert result["code"] == "denied" and "approver broke" in result["error"]
    result = error(asyncio.run(traced.reg.adispatch("write_file", {})))
    assert result["code"] == "denied" and "approver broke" in result["error"]
    assert traced.ran == []


def test_the_approver_gets_a_copy_it_cannot_change_the_call_with(traced):
    def approver(name, arguments, rule):
        arguments["path"] = "/etc/passwd"
        return "allow"

    traced.reg.set_approver(approver)
    assert traced.reg.dispatch("write_file", {"path": "a"}) == "write_file ran"
    assert traced.ran[0][1] == {"path": "a"}


def test_a_call_approver_answers_its_call_and_is_never_passed_to_the_handler(traced):
    traced.reg.set_approver(lambda *a: "deny")
    result = traced.reg.dispatch("write_file", {}, approve=lambda *a: "allow")
    assert result == "write_file ran"
    assert traced.ran == [("write_file", {}, {})]
    assert error(traced.reg.dispatch("write_file", {}))["code"] == "denied"


def test_a_call_approver_never_turns_a_deny_into_an_allow(traced):
    asked = []
    approve = lambda *a: asked.append(a) or "allow"  # noqa: E731
    assert error(traced.reg.dispatch("terminal", {}, approve=approve))["code"] == "denied"
    assert error(asyncio.run(traced.reg.adispatch("terminal", {}, approve=approve)))["code"] == (
        "denied"
    )
    assert asked == [] and traced.ran == []


def test_a_sync_dispatch_runs_an_async_approver(traced):
    async def approver(name, arguments, rule):
        await asyncio.sleep(0)
        return "allow"

    assert traced.reg.dispatch("write_file", {}, approve=approver) == "write_file ran"
    traced.reg.set_approver(approver)
    assert traced.reg.dispatch("write_file", {}) == "write_file ran"


def test_an_async_dispatch_awaits_an_async_approver_and_keeps_a_sync_one_off_the_loop(traced):
    threads = []

    def sync_approver(name, arguments, rule):
        threads.append(threading.get_ident())
        time.sleep(0.05)
        return "allow"

    async def async_approver(name, arguments, rule):
        threads.append(threading.get_ident())
        return "allow"

    async def main():
        loop_thread = threading.get_ident()
        ticks = 0

        async def ticker():
            nonlocal ticks
            for _ in range(5):
                ticks += 1
                await asyncio.sleep(0.005)

        results = await asyncio.gather(
            traced.reg.adispatch("write_file", {}, approve=sync_approver), ticker()
        )
        assert results[0] == "write_file ran"
        assert ticks == 5, "the loop ran while the sync approver slept"
        assert await traced.reg.adispatch("write_file", {}, approve=async_approver) == (
            "write_file ran"
        )
        return loop_thread

    loop_thread = asyncio.run(main())
    assert threads[0] != loop_thread and threads[1] == loop_thread


def test_a_handler_calling_another_tool_is_checked_on_that_call():
    t = Traced()
    t.add("terminal")
    t.reg.register(
        "outer",
        "t",
        {"name": "outer", "parameters": SCHEMA},
        lambda a: t.reg.dispatch("terminal", {}),
    )
    t.reg.set_permissions({"deny": ["terminal"]})
    assert error(t.reg.dispatch("outer", {}))["code"] == "denied"
    assert t.ran == []


# -- records -----------------------------------------------------------------------------


def test_every_decision_is_in_the_log_with_its_rule(traced):
    traced.add("other")
    since = traced.reg.last_decision_seq
    traced.reg.dispatch("read_file", {})
    traced.reg.dispatch("terminal", {})
    traced.reg.dispatch("other", {})
    traced.reg.dispatch("write_file", {})
    traced.reg.dispatch("write_file", {}, approve=lambda *a: "allow")
    traced.reg.dispatch("write_file", {}, approve=lambda *a: ("deny", "no"))
    got = [(d.action, d.tool, d.rule, d.reason) for d in traced.reg.decisions(since)]
    assert got == [
        ("allowed", "read_file", "read_file", "by the operator's rule 'read_file'"),
        ("denied", "terminal", "terminal", "by the operator's rule 'terminal'"),
        ("denied", "other", None, 'by the operator\'s default ("deny")'),
        ("asked", "write_file", "write_file", "denied: no approver (approval required)"),
        ("asked", "write_file", "write_file", "allowed by the approver"),
        ("asked", "write_file", "write_file", "denied by the approver: no"),
    ]
    assert {d.owner for d in traced.reg.decisions(since)} == {"host"}
    counts = {row["where"]: row for row in traced.reg.permission_counts()}
    assert counts["permissions.ask[0]"] == {
        "rule": "write_file",
        "where": "permissions.ask[0]",
        "verdict": "ask",
        "allowed": 1,
        "denied": 2,
        "asked": 3,
    }
    assert (counts["permissions.deny[0]"]["denied"], counts["permissions.allow[0]"]["allowed"]) == (
        1,
        1,
    )
    assert counts["permissions.default"]["denied"] == 1


def test_the_call_records_are_bounded_and_never_push_registrations_out():
    t = Traced(decision_log_size=5)
    for name in ("a", "b", "c"):
        t.add(name)
    t.reg.set_permissions({"allow": ["*"]})
    for _ in range(50):
        t.reg.dispatch("a", {})
    decisions = t.reg.decisions()
    assert [d.tool for d in decisions if d.action == "registered"] == ["a", "b", "c"]
    assert len([d for d in decisions if d.action == "allowed"]) == 5
    assert [d.seq for d in decisions] == sorted(d.seq for d in decisions)
    assert t.reg.permission_counts()[0]["allowed"] == 50


def test_calls_from_many_threads_are_all_counted():
    t = Traced()
    t.add("a")
    t.reg.set_permissions({"allow": ["a"]})

    def run():
        for _ in range(500):
            t.reg.dispatch("a", {})

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert t.reg.permission_counts()[0]["allowed"] == 4000
    seqs = [d.seq for d in t.reg.decisions()]
    assert len(seqs) == len(set(seqs))


def test_no_permissions_no_records_and_no_counts():
    t = Traced()
    t.add("a")
    t.reg.dispatch("a", {})
    assert [d.action for d in t.reg.decisions()] == ["registered"]
    assert t.reg.permission_counts() == []


def test_a_plan_made_before_the_rules_is_judged_by_them_all_the_same():
    # A call racing set_permissions may hold a plan made before it: simulated by
    # installing rules without dropping the plans.
    from toolreg._core.permissions import Permissions
    from toolreg._dispatch.permission_check import CallJudge

    t = Traced()
    t.add("terminal")
    t.reg.dispatch("terminal", {})
    dispatcher = t.reg._dispatcher
    permissions = Permissions.from_table({"deny": ["terminal"]})
    dispatcher._judge = CallJudge(permissions, dispatcher._log, dispatcher._callers)
    dispatcher._wrapped = True
    dispatcher.hot.clear()
    assert dispatcher._plans["terminal"].judge is None
    assert error(t.reg.dispatch("terminal", {}))["code"] == "denied"
    assert error(asyncio.run(t.reg.adispatch("terminal", {})))["code"] == "denied"
    assert len(t.ran) == 1


def test_approve_is_reserved_without_rules_too_and_alongside_progress():
    # A host may pass approve= before any config installed rules: the handler must
    # never receive it as one of its own keyword arguments, on any route.
    t = Traced()
    t.add("a")
    approve = lambda *a: "allow"  # noqa: E731
    assert t.reg.dispatch("a", {}, approve=approve) == "a ran"
    assert t.reg.dispatch("a", {}, approve=approve, progress=lambda *a: None) == "a ran"
    assert asyncio.run(t.reg.adispatch("a", {}, approve=approve)) == "a ran"
    assert t.ran == [("a", {}, {})] * 3


def test_a_config_without_the_table_leaves_a_host_tool_on_the_plain_hot_path():
    # docs/permissions.md: without [permissions] every call runs at the cost it had
    # before: the hot entry calls the registered handler itself, unwrapped, unjudged.
    from toolreg import apply_config, parse_config

    t = Traced()
    t.add("read_file")
    t.reg.dispatch("read_file", {})
    apply_config(parse_config(""), t.reg)
    assert t.reg.dispatch("read_file", {}) == "read_file ran"
    dispatcher = t.reg._dispatcher
    assert dispatcher._judge is None and not dispatcher._wrapped
    assert dispatcher.hot["read_file"][1] is t.reg.get_entry("read_file").handler
    assert [d.action for d in t.reg.decisions()] == ["registered"]
