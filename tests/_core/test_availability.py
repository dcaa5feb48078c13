"""Tests for availability: requires_env, the 30 s check_fn cache and the 60 s flake grace."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from conftest import FakeClock
from toolreg import ToolRegistry

TTL = 30.0
GRACE = 60.0


class Probe:
    """A check_fn that counts its calls and answers what the test says."""

    def __init__(self, result: Any = True) -> None:
        self.result = result
        self.calls = 0

    def __call__(self) -> Any:
        self.calls += 1
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


@pytest.fixture(autouse=True)
def no_test_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ["TOOLREG_T_A", "TOOLREG_T_B", "TOOLREG_T_C"]:
        monkeypatch.delenv(var, raising=False)


SCHEMA: dict[str, Any] = {"parameters": {"type": "object", "properties": {}}}


def add(reg: ToolRegistry, name: str, toolset: str = "ts", **kwargs: Any) -> None:
    reg.register(name, toolset, dict(SCHEMA), lambda args: "ok", **kwargs)


def flake_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r for r in caplog.records if r.levelno == logging.WARNING and "probed" in r.getMessage()
    ]


class TestCache:
    def test_result_is_cached_for_30_seconds(self, reg: ToolRegistry, clock: FakeClock) -> None:
        probe = Probe(True)
        add(reg, "probed", check_fn=probe)

        assert reg.availability("probed") == (True, "")
        assert reg.is_tool_available("probed")
        clock.advance(TTL - 0.1)
        assert reg.availability("probed")[0]
        assert probe.calls == 1

        clock.advance(0.2)
        assert reg.availability("probed")[0]
        assert probe.calls == 2

    def test_cached_result_hides_a_change_until_expiry(
        self, reg: ToolRegistry, clock: FakeClock
    ) -> None:
        probe = Probe(False)
        add(reg, "probed", check_fn=probe)
        assert not reg.availability("probed")[0]

        probe.result = True
        clock.advance(TTL - 1)
        assert not reg.availability("probed")[0]
        clock.advance(2)
        assert reg.availability("probed")[0]

    def test_invalidate_forgets_cached_results(self, reg: ToolRegistry) -> None:
        probe = Probe(False)
        add(reg, "probed", check_fn=probe)
        assert not reg.availability("probed")[0]

        probe.result = True
        assert not reg.availability("probed")[0]  # still cached
        reg.invalidate_check_fn_cache()
        assert reg.availability("probed") == (True, "")
        assert probe.calls == 2


class TestFlakeGrace:
    def test_failure_soon_after_success_is_served_as_available(
        self, reg: ToolRegistry, clock: FakeClock, caplog: pytest.LogCaptureFixture
    ) -> None:
        probe = Probe(True)
        add(reg, "probed", check_fn=probe)
        assert reg.availability("probed")[0]

        probe.result = False
        clock.advance(TTL + 1)
        with caplog.at_level(logging.WARNING, logger="toolreg"):
            assert reg.availability("probed")[0]
        assert len(flake_warnings(caplog)) == 1

    def test_flake_is_not_cached(self, reg: ToolRegistry, clock: FakeClock) -> None:
        probe = Probe(True)
        add(reg, "probed", check_fn=probe)
        reg.availability("probed")
        probe.result = False
        clock.advance(TTL + 1)

        assert reg.availability("probed")[0]
        assert reg.availability("probed")[0]
        assert probe.calls == 3  # each read after the flake probes again

        probe.result = True  # recovery is seen at once
        assert reg.availability("probed")[0]
        assert probe.calls == 4

    def test_grace_counts_from_the_last_success(
        self, reg: ToolRegistry, clock: FakeClock, caplog: pytest.LogCaptureFixture
    ) -> None:
        probe = Probe(True)
        add(reg, "probed", check_fn=probe)
        reg.availability("probed")  # success at t=0
        probe.result = False

        with caplog.at_level(logging.WARNING, logger="toolreg"):
            clock.advance(TTL + 1)
            assert reg.availability("probed")[0]  # t=31: flake
            clock.advance(GRACE - TTL - 2)
            assert reg.availability("probed")[0]  # t=59: still within the grace
            clock.advance(2)
            verdict = reg.availability("probed")  # t=61: honoured
        assert verdict[0] is False
        assert len(flake_warnings(caplog)) == 1  # once per grace window

    def test_failure_past_the_window_is_honoured_and_cached(
        self, reg: ToolRegistry, clock: FakeClock
    ) -> None:
        probe = Probe(True)
        add(reg, "probed", check_fn=probe)
        reg.availability("probed")
        probe.result = False
        clock.advance(GRACE + 1)

        assert reg.availability("probed")[0] is False
        calls = probe.calls
        probe.result = True
        clock.advance(TTL - 1)
        assert reg.availability("probed")[0] is False  # the failure is cached
        assert probe.calls == calls
        clock.advance(2)
        assert reg.availability("probed")[0] is True

    def test_failure_with_no_earlier_success_is_honoured_and_cached(
        self, reg: ToolRegistry, clock: FakeClock, caplog: pytest.LogCaptureFixture
    ) -> None:
        probe = Probe(False)
        add(reg, "probed", check_fn=probe)
        with caplog.at_level(logging.WARNING, logger="toolreg"):
            assert reg.availability("probed")[0] is False
            clock.advance(TTL - 1)
            assert reg.availability("probed")[0] is False
        assert probe.calls == 1
        assert flake_warnings(caplog) == []

    def test_new_success_restarts_the_grace(self, reg: ToolRegistry, clock: FakeClock) -> None:
        probe = Probe(True)
        add(reg, "probed", check_fn=probe)
        reg.availability("probed")  # success at t=0
        clock.advance(GRACE - 10)
        reg.availability("probed")  # success at t=50
        probe.result = False
        clock.advance(GRACE - 10)  # t=100: 100 s after the first, 50 s after the last
        assert reg.availability("probed")[0] is True

    def test_flaky_tool_stays_in_the_definitions(self, reg: ToolRegistry, clock: FakeClock) -> None:
        probe = Probe(True)
        add(reg, "probed", check_fn=probe)
        assert [d["function"]["name"] for d in reg.get_definitions()] == ["probed"]
        probe.result = False
        clock.advance(TTL + 1)
        assert [d["function"]["name"] for d in reg.get_definitions()] == ["probed"]


class TestCheckFnOutcomes:
    def test_raising_check_counts_as_failed_and_logs_the_traceback(
        self, reg: ToolRegistry, caplog: pytest.LogCaptureFixture
    ) -> None:
        add(reg, "probed", check_fn=Probe(ConnectionError("docker socket gone")))
        with caplog.at_level(logging.DEBUG, logger="toolreg"):
            ok, reason = reg.availability("probed")

        assert ok is False
        assert "docker socket gone" in reason
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1
        assert "ConnectionError: docker socket gone" in warnings[0].getMessage()
        assert "probed" in warnings[0].getMessage()
        traces = [r for r in caplog.records if r.levelno == logging.DEBUG]
        assert traces and "traceback" in traces[0].getMessage()

    def test_raising_check_soon_after_success_is_a_flake(
        self, reg: ToolRegistry, clock: FakeClock
    ) -> None:
        probe = Probe(True)
        add(reg, "probed", check_fn=probe)
        reg.availability("probed")
        probe.result = TimeoutError("slow")
        clock.advance(TTL + 1)
        assert reg.availability("probed")[0] is True

    def test_check_fn_may_give_its_own_reason(self, reg: ToolRegistry) -> None:
        add(reg, "probed", check_fn=lambda: (False, "Docker is not running"))
        assert reg.availability("probed") == (False, "Docker is not running")

    def test_plain_false_still_gives_a_reason(self, reg: ToolRegistry) -> None:
        add(reg, "probed", check_fn=lambda: False)
        ok, reason = reg.availability("probed")
        assert ok is False
        assert reason

    def test_true_tuple_means_available(self, reg: ToolRegistry) -> None:
        add(reg, "probed", check_fn=lambda: (True, "all good"))
        assert reg.availability("probed")[0] is True


class TestRequiresEnv:
    def test_missing_variables_are_named(
        self, reg: ToolRegistry, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("TOOLREG_T_B", "set")
        add(reg, "needs", requires_env=["TOOLREG_T_A", "TOOLREG_T_B", "TOOLREG_T_C"])

        ok, reason = reg.availability("needs")

        assert ok is False
        assert "TOOLREG_T_A" in reason
        assert "TOOLREG_T_C" in reason
        assert "TOOLREG_T_B" not in reason

    def test_available_once_set_without_waiting(
        self, reg: ToolRegistry, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        add(reg, "needs", requires_env=["TOOLREG_T_A"])
        assert not reg.is_tool_available("needs")
        monkeypatch.setenv("TOOLREG_T_A", "token")
        assert reg.availability("needs") == (True, "")

    def test_a_single_string_is_one_variable(
        self, reg: ToolRegistry, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        add(reg, "needs", requires_env="TOOLREG_T_A")
        assert reg.get_entry("needs").requires_env == ("TOOLREG_T_A",)
        assert reg.availability("needs") == (
            False,
            "missing environment variable(s): TOOLREG_T_A",
        )
        monkeypatch.setenv("TOOLREG_T_A", "token")
        assert reg.availability("needs") == (True, "")

    def test_unknown_tool_is_unavailable(self, reg: ToolRegistry) -> None:
        ok, reason = reg.availability("ghost")
        assert ok is False
        assert "ghost" in reason


class TestToolsets:
    @pytest.fixture
    def populated(self, reg: ToolRegistry) -> ToolRegistry:
        add(reg, "web_search", toolset="web", requires_env=["TOOLREG_T_A"])
        add(reg, "web_fetch", toolset="web")
        add(reg, "docker_run", toolset="docker", check_fn=lambda: (False, "no docker"))
        add(reg, "browse", toolset="browser", requires_env=["TOOLREG_T_B"])
        return reg

    def test_is_toolset_available(self, populated: ToolRegistry) -> None:
        assert populated.is_toolset_available("web")  # one of two tools is enough
        assert not populated.is_toolset_available("docker")
        assert not populated.is_toolset_available("browser")
        assert not populated.is_toolset_available("no-such-toolset")

    def test_is_toolset_available_follows_aliases(self, populated: ToolRegistry) -> None:
        populated.register_toolset_alias("internet", "web")
        assert populated.is_toolset_available("internet")

    def test_check_toolset_requirements(self, populated: ToolRegistry) -> None:
        assert populated.check_toolset_requirements() == {
            "browser": False,
            "docker": False,
            "web": True,
        }

    def test_get_available_toolsets(self, populated: ToolRegistry) -> None:
        report = populated.get_available_toolsets()

        assert set(report) == {"browser", "docker", "web"}
        assert report["web"]["available"] is True
        assert report["web"]["tools"] == ["web_fetch", "web_search"]
        assert "TOOLREG_T_A" in report["web"]["unavailable"]["web_search"]
        assert "web_fetch" not in report["web"]["unavailable"]
        assert any("TOOLREG_T_A" in req for req in report["web"]["requirements"])
        assert report["docker"]["available"] is False
        assert report["docker"]["unavailable"] == {"docker_run": "no docker"}
        assert any("TOOLREG_T_B" in req for req in report["browser"]["requirements"])

    def test_toolset_verdict_changes_with_the_env(
        self, populated: ToolRegistry, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        assert not populated.is_toolset_available("browser")
        monkeypatch.setenv("TOOLREG_T_B", "1")
        assert populated.is_toolset_available("browser")


class TestSharedProbesAndPruning:
    """From the reference system's own suite: a shared probe, a flapping server."""

    def test_a_shared_probe_runs_once_per_read_in_the_grace_window_too(
        self, reg: ToolRegistry, clock: FakeClock, caplog: pytest.LogCaptureFixture
    ) -> None:
        probe = Probe(True)
        for index in range(5):
            add(reg, f"shared_{index}", check_fn=probe)
        assert len(reg.get_definitions()) == 5
        assert probe.calls == 1
        clock.advance(TTL + 1)  # cache expired, the last success is 31 s ago
        probe.result = False
        with caplog.at_level(logging.WARNING, logger="toolreg.availability"):
            assert len(reg.get_definitions()) == 5, "a flake: all five stay"
        assert probe.calls == 2, "one run for the five tools that share it"
        assert caplog.text.count("treating it as a flake") == 1
        report = reg.get_available_toolsets()
        assert report["ts"]["available"] and probe.calls == 3
        assert reg.check_toolset_requirements() == {"ts": True} and probe.calls == 4

    def test_probes_of_tools_that_went_are_forgotten(self, reg: ToolRegistry) -> None:
        """Each state change of an MCP server brings a new probe; the cache must not grow."""
        for _ in range(100):
            add(reg, "flapping", toolset="mcp-flappy", check_fn=Probe(True))
            assert reg.is_tool_available("flapping")
        assert len(reg._availability._verdicts) == 1
        assert len(reg._availability._last_success) == 1
        reg.deregister("flapping")
        add(reg, "other", check_fn=Probe(True))
        assert reg.is_tool_available("other")
        assert len(reg._availability._verdicts) == 1

    def test_toolset_report_is_one_snapshot(self, reg: ToolRegistry) -> None:
        """A toolset deleted while the report runs is reported whole, never as tools == []."""

        def deletes_the_other_toolset() -> bool:
            reg.deregister("b_tool")
            return True

        add(reg, "a_tool", toolset="a", check_fn=deletes_the_other_toolset)
        add(reg, "b_tool", toolset="b")
        report = reg.get_available_toolsets()
        assert reg.get_entry("b_tool") is None, "it was deleted during the report"
        assert report["b"]["tools"] == ["b_tool"]
        assert all(item["tools"] for item in report.values())


class TestBoundedFailureText:
    """A probe's failure text is bounded wherever it is stored or logged."""

    HUGE = "x" * 200_000

    def test_huge_exception_message_is_bounded_in_reason_and_log(
        self, reg: ToolRegistry, clock: FakeClock, caplog: pytest.LogCaptureFixture
    ) -> None:
        add(reg, "probed", check_fn=Probe(RuntimeError(self.HUGE)))
        with caplog.at_level(logging.DEBUG, logger="toolreg"):
            ok, reason = reg.availability("probed")
        assert ok is False
        assert len(reason) <= 500
        assert "RuntimeError" in reason and "truncated" in reason
        logged = sum(len(r.getMessage()) for r in caplog.records)
        assert 0 < logged < 10_000

    def test_huge_returned_reason_is_bounded(self, reg: ToolRegistry) -> None:
        add(reg, "probed", check_fn=Probe((False, self.HUGE)))
        ok, reason = reg.availability("probed")
        assert ok is False
        assert len(reason) <= 500 and "truncated" in reason

    def test_raising_flake_logs_once_per_window_and_bounded(
        self, reg: ToolRegistry, clock: FakeClock, caplog: pytest.LogCaptureFixture
    ) -> None:
        probe = Probe(True)
        add(reg, "probed", check_fn=probe)
        reg.availability("probed")
        probe.result = RuntimeError(self.HUGE)
        clock.advance(TTL + 1)
        with caplog.at_level(logging.WARNING, logger="toolreg"):
            for _ in range(20):
                assert reg.availability("probed")[0]
        assert probe.calls == 21
        assert len(caplog.records) == 1
        assert len(caplog.records[0].getMessage()) < 2_000
