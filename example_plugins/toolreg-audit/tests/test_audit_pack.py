"""toolreg-audit: the hooks called directly, then the pack loaded by the real loader."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import toolreg_audit
from toolreg_audit import toolreg_configure, toolreg_post_tool_call, toolreg_pre_tool_call

from toolreg import ToolRegistry, tool_error, tool_result
from toolreg.testing import assert_dispatches, assert_no_override_without_consent

PACK = "toolreg_audit"
PLUGIN_ID = "toolreg-audit"


@pytest.fixture
def log_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Configure the pack to log to a fresh file; reset it afterwards."""
    monkeypatch.chdir(tmp_path)  # where the default log would go
    monkeypatch.delenv("TOOLREG_AUDIT_LOG", raising=False)
    path = tmp_path / "audit.jsonl"
    toolreg_configure({"log_path": str(path)})
    yield path
    toolreg_audit.audit_log().close()
    toolreg_configure({})


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_one_line_per_call(log_path: Path) -> None:
    before = datetime.now(timezone.utc)
    assert toolreg_pre_tool_call("read_file", {"path": "a.txt"}) is None
    toolreg_post_tool_call("read_file", {"path": "a.txt"}, "hello")
    toolreg_post_tool_call("read_file", {"path": "b.txt"}, tool_error("no such file"))
    first, second = records(log_path)
    assert set(first) == {"ts", "tool", "args", "ok", "result_chars", "blocked"}
    assert first["tool"] == "read_file" and first["args"] == {"path": "a.txt"}
    assert (first["ok"], first["result_chars"], first["blocked"]) == (True, 5, False)
    assert (second["ok"], second["blocked"]) == (False, False)
    assert second["result_chars"] == len(tool_error("no such file"))
    ts = datetime.fromisoformat(first["ts"])
    assert ts.utcoffset() == timedelta(0)
    assert before - timedelta(seconds=1) <= ts <= datetime.now(timezone.utc)


def test_multimodal_and_odd_args(log_path: Path) -> None:
    result = {"_multimodal": True, "content": [{"type": "text", "text": "hi"}]}
    toolreg_post_tool_call("screenshot", {"when": object(), "path": Path("x")}, result)
    (record,) = records(log_path)
    assert record["ok"] is True
    assert record["result_chars"] == len(json.dumps(result, ensure_ascii=False))
    assert record["args"]["path"] == repr(Path("x"))  # logged, not a crash


def test_blocked_tool(log_path: Path) -> None:
    toolreg_configure({"log_path": str(log_path), "block": ["terminal"]})
    message = toolreg_pre_tool_call("terminal", {"command": "rm -rf /"})
    assert message == "Tool 'terminal' is blocked by the operator's audit policy (toolreg-audit)"
    assert toolreg_pre_tool_call("read_file", {"path": "a"}) is None
    (record,) = records(log_path)
    assert record["tool"] == "terminal" and record["args"] == {"command": "rm -rf /"}
    assert (record["blocked"], record["ok"], record["message"]) == (True, False, message)
    assert toolreg_audit.blocked_tools() == frozenset({"terminal"})


def test_write_failure_raises(tmp_path: Path, log_path: Path) -> None:
    toolreg_configure({"log_path": str(tmp_path / "missing-dir" / "audit.jsonl")})
    with pytest.raises(FileNotFoundError):
        toolreg_pre_tool_call("read_file", {})  # the log is opened before the tool runs
    with pytest.raises(FileNotFoundError):
        toolreg_post_tool_call("read_file", {}, "ok")
    toolreg_configure({"log_path": str(tmp_path)})  # a directory
    with pytest.raises(IsADirectoryError):
        toolreg_post_tool_call("read_file", {}, "ok")


def test_recovers_after_a_failed_write(tmp_path: Path, log_path: Path) -> None:
    path = tmp_path / "later" / "audit.jsonl"
    toolreg_configure({"log_path": str(path)})
    with pytest.raises(OSError):
        toolreg_post_tool_call("a", {}, "x")
    path.parent.mkdir()
    toolreg_post_tool_call("b", {}, "x")
    assert [r["tool"] for r in records(path)] == ["b"]


def test_appends_to_an_existing_log(log_path: Path) -> None:
    log_path.write_text('{"earlier": true}\n', encoding="utf-8")
    toolreg_post_tool_call("a", {}, "x")
    assert records(log_path)[0] == {"earlier": True}
    assert records(log_path)[1]["tool"] == "a"


def test_concurrent_writers_never_interleave(log_path: Path) -> None:
    def work(n: int) -> None:
        for i in range(50):
            toolreg_post_tool_call(f"tool{n}", {"i": i, "pad": "x" * 5000}, "r" * i)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = records(log_path)
    assert len(lines) == 400
    assert sorted((r["tool"], r["args"]["i"]) for r in lines) == sorted(
        (f"tool{n}", i) for n in range(8) for i in range(50)
    )


def test_default_log_path(tmp_path: Path, log_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toolreg_configure({})
    assert toolreg_audit.audit_log().path == tmp_path / "toolreg-audit.jsonl"  # the cwd
    monkeypatch.setenv("TOOLREG_AUDIT_LOG", str(tmp_path / "from-env.jsonl"))
    toolreg_configure({})
    toolreg_post_tool_call("a", {}, "x")
    assert len(records(tmp_path / "from-env.jsonl")) == 1


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ({"block": "terminal"}, "settings.block"),
        ({"block": [1]}, "settings.block"),
        ({"log_path": 5}, "settings.log_path"),
        ({"log_path": ""}, "settings.log_path"),
        ({"blocked": ["terminal"]}, "settings: unknown key(s) blocked"),
    ],
)
def test_bad_settings_raise(settings: dict[str, Any], key: str) -> None:
    with pytest.raises(ValueError) as excinfo:
        toolreg_configure(settings)
    assert f"plugins.entries.toolreg-audit.{key}" in str(excinfo.value)


# -- end to end: the real loader (toolreg's pytest plugin: tool_registry, load_pack) -------


def schema(name: str) -> dict[str, Any]:
    return {"name": name, "description": name, "parameters": {"type": "object", "properties": {}}}


@pytest.fixture
def reg(
    tool_registry: ToolRegistry, load_pack: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ToolRegistry]:
    """The test's registry, with three host tools for the pack's hooks to watch."""
    monkeypatch.chdir(tmp_path)  # where the default log would go
    tool_registry.register("echo", "demo", schema("echo"), lambda args, **_: tool_result(args))
    tool_registry.register("fail", "demo", schema("fail"), lambda args, **_: tool_error("nope"))
    tool_registry.register(
        "danger", "demo", schema("danger"), lambda args, **_: (tmp_path / "ran").touch() or "ran"
    )
    yield tool_registry
    loaded = sys.modules.get(PACK)  # the loader's fresh copy, until load_pack cleans up
    if loaded is not None and loaded is not toolreg_audit:
        loaded.audit_log().close()


def load(load_pack: Any, settings: str) -> Any:
    """Load the pack with these settings (TOML lines); its outcome."""
    config = f"[plugins.entries.{PLUGIN_ID}.settings]\n{settings}\n"
    return load_pack(PLUGIN_ID, config=config)[PLUGIN_ID]


def test_loaded_audits_and_blocks(reg: ToolRegistry, load_pack: Any, tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    outcome = load(load_pack, f'log_path = "{log}"\nblock = ["danger"]')
    assert (outcome.status, outcome.reason) == ("loaded", "")
    assert outcome.tools_added == [] and outcome.tools_overridden == []
    assert reg.get_all_tool_names() == ["danger", "echo", "fail"]

    assert json.loads(assert_dispatches(reg, "echo", {"x": 1})) == {"x": 1}
    assert json.loads(reg.dispatch("fail", {})) == {"error": "nope"}
    blocked = json.loads(reg.dispatch("danger", {"y": 2}))
    assert blocked["error"] == (
        "Tool 'danger' is blocked by the operator's audit policy (toolreg-audit)"
    )
    assert not (tmp_path / "ran").exists()  # the handler never ran

    lines = records(log)
    assert [(r["tool"], r["ok"], r["blocked"]) for r in lines] == [
        ("echo", True, False),
        ("fail", False, False),
        ("danger", False, True),
    ]
    assert lines[0]["args"] == {"x": 1} and lines[0]["result_chars"] == len('{"x": 1}')


def test_unwritable_log_blocks_calls(reg: ToolRegistry, load_pack: Any, tmp_path: Path) -> None:
    outcome = load(load_pack, f'log_path = "{tmp_path}"')  # a directory: every open fails
    assert outcome.status == "loaded"
    result = json.loads(reg.dispatch("danger", {}))
    assert "toolreg-audit" in result["error"] and "IsADirectoryError" in result["error"]
    assert not (tmp_path / "ran").exists()  # fail closed: blocked before the tool ran


def test_bad_settings_fail_the_pack(reg: ToolRegistry, load_pack: Any) -> None:
    outcome = load(load_pack, 'block = "danger"')
    assert outcome.status == "failed" and "settings.block" in outcome.reason
    assert_dispatches(reg, "echo", {"x": 1}, contains='"x": 1')  # no hooks left behind


def test_overrides_nothing_without_consent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert assert_no_override_without_consent(PLUGIN_ID)[PLUGIN_ID].status == "loaded"
