"""``toolreg serve`` against the official MCP conformance suite, and the tools the suite calls.

The suite (``@modelcontextprotocol/conformance``, pinned in
``scripts/conformance.py``) runs only when asked: ``-m conformance`` (``make
conformance``, which CI runs). It needs the npm registry once, to install Node
and the suite into a cache folder, and skips, saying why, when it cannot reach
it. The first test runs by default: the suite's tools, served from
``tests/conformance/``, answer as its scenarios ask, seen by the Python SDK's
client, so the fixture cannot rot while the suite is not run.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import warnings
import wave
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest

from serve_harness import run, text_of

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "conformance.py"
CONFIG = ROOT / "tests" / "conformance" / "toolreg.toml"
#: ``scripts/conformance.py``'s exit status when it cannot get the suite.
SKIPPED = 77


def serve_conformance_tools(tmp_path: Path) -> Any:
    """An SDK stdio transport to ``toolreg serve`` with the suite's config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLREG_")}
    args = ["-m", "toolreg", "serve", "--config", str(CONFIG)]
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=tmp_path)
    return stdio_client(params, errlog=(tmp_path / "serve.log").open("a"))


def test_the_suites_tools_answer_as_its_scenarios_ask(tmp_path: Path) -> None:
    logs: list[tuple[str, Any]] = []
    reports: list[tuple[float, float | None]] = []

    async def logged(params: Any) -> None:
        logs.append((params.level, params.data))

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total))

    async def session() -> None:
        transport = serve_conformance_tools(tmp_path)
        async with Client(transport, mode="legacy", logging_callback=logged) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            schema = tools["json_schema_2020_12_tool"].input_schema
            assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
            assert "address" in schema["$defs"] and schema["additionalProperties"] is False

            def kinds(result: Any) -> list[str]:
                return [block.type for block in result.content]

            assert kinds(await client.call_tool("test_image_content", {})) == ["image"]
            audio = (await client.call_tool("test_audio_content", {})).content[0]
            assert audio.mime_type == "audio/wav"
            with wave.open(BytesIO(base64.b64decode(audio.data))) as clip:
                assert clip.getnframes() > 0
            resource = (await client.call_tool("test_embedded_resource", {})).content[0]
            assert resource.type == "resource" and resource.resource.mime_type == "text/plain"
            mixed = await client.call_tool("test_multiple_content_types", {})
            assert kinds(mixed) == ["text", "image", "resource"]

            failed = await client.call_tool("test_error_handling", {})
            assert failed.is_error and "intentionally" in text_of(failed)

            with warnings.catch_warnings():  # deprecated as of 2026-07-28; the suite sends it
                warnings.simplefilter("ignore")
                await client.set_logging_level("debug")  # type: ignore[arg-type]
            logs.clear()  # dispatch's own error record of the failing call came before
            await client.call_tool("test_tool_with_logging", {})
            assert [level for level, _ in logs] == ["info"] * 3

            await client.call_tool("test_tool_with_progress", {}, progress_callback=progressed)
            # Reports may be coalesced (docs/mcp.md), never reordered; the last always arrives.
            values = [progress for progress, _ in reports]
            assert values == sorted(set(values)) and reports[-1] == (100, 100)

    run(session)


@pytest.mark.conformance
def test_the_official_suite_passes_in_both_modes(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--json", str(results)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    print(done.stdout + done.stderr)  # the table, for -rA
    if done.returncode == SKIPPED:
        pytest.skip(done.stderr.strip().splitlines()[-1])
    report = json.loads(results.read_text())
    assert set(report["modes"]) == {"stateful", "stateless"}
    for mode, scenarios in report["modes"].items():
        assert sorted(scenarios) == sorted(report["applicable"]), mode
        failed = {name: r["problems"] for name, r in scenarios.items() if not r["passed"]}
        assert not failed, f"{mode}: {failed}"
    assert done.returncode == 0, done.stdout + done.stderr


def test_without_the_registry_the_suite_is_skipped_saying_why(tmp_path: Path) -> None:
    # An empty cache, and a registry on a loopback port nothing listens on.
    env = {**os.environ, "TOOLREG_CONFORMANCE_CACHE": str(tmp_path / "cache")}
    env["npm_config_registry"] = "http://127.0.0.1:9/"
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == SKIPPED, done.stdout + done.stderr
    reason = done.stderr.strip().splitlines()[-1]
    assert reason.startswith("conformance: skipped: ")
    assert "registry cannot be reached" in reason or "npm is not installed" in reason
    assert not (tmp_path / "cache").exists()  # nothing half-installed
