"""The tools the MCP conformance suite's server scenarios call, written as a pack author would.

Each answers as the suite's scenario for it asks (``@modelcontextprotocol/conformance``
0.1.16, ``src/scenarios/server/``): the names, arguments and results are the suite's.
``scripts/conformance.py`` serves them with ``../toolreg.toml``, as the local plugin
``local:conformance_tools``.
"""

from __future__ import annotations

import base64
import io
import time
import wave
from typing import Any

from toolreg import ToolContext, registry, tool

#: The scenarios that wait for log messages or progress ask for ~50 ms between them.
STEP_SECONDS = 0.05


def _wav_silence() -> str:
    """A tenth of a second of 8 kHz mono silence as a WAV file, base64."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(1)
        wav.setframerate(8000)
        wav.writeframes(b"\x80" * 800)
    return base64.b64encode(out.getvalue()).decode()


#: A 1x1 PNG.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
    "nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)
WAV = _wav_silence()


def _content(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"_multimodal": True, "content": list(blocks)}


def _resource(uri: str, mime: str, text: str) -> dict[str, Any]:
    return {"type": "resource", "resource": {"uri": uri, "mimeType": mime, "text": text}}


@tool(toolset="conformance")
def test_simple_text() -> str:
    """Return a simple text response."""
    return "This is a simple text response for testing."


@tool(toolset="conformance")
def test_image_content() -> dict[str, Any]:
    """Return a 1x1 PNG image."""
    return _content({"type": "image", "data": PNG, "mimeType": "image/png"})


@tool(toolset="conformance")
def test_audio_content() -> dict[str, Any]:
    """Return a short silent WAV clip."""
    return _content({"type": "audio", "data": WAV, "mimeType": "audio/wav"})


@tool(toolset="conformance")
def test_embedded_resource() -> dict[str, Any]:
    """Return an embedded text resource."""
    text = "This is an embedded resource content."
    return _content(_resource("test://embedded-resource", "text/plain", text))


@tool(toolset="conformance")
def test_multiple_content_types() -> dict[str, Any]:
    """Return text, an image and an embedded resource in one result."""
    return _content(
        {"type": "text", "text": "Multiple content types test:"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        _resource(
            "test://mixed-content-resource", "application/json", '{"test":"data","value":123}'
        ),
    )


@tool(toolset="conformance")
def test_tool_with_logging(ctx: ToolContext) -> str:
    """Send three info log messages while running."""
    ctx.log("info", "Tool execution started")
    time.sleep(STEP_SECONDS)
    ctx.log("info", "Tool processing data")
    time.sleep(STEP_SECONDS)
    ctx.log("info", "Tool execution completed")
    return "Tool with logging executed successfully"


@tool(toolset="conformance")
def test_tool_with_progress(ctx: ToolContext) -> str:
    """Report progress 0, 50 and 100 of 100."""
    for done in (0, 50, 100):
        if done:
            time.sleep(STEP_SECONDS)
        ctx.report_progress(done, 100, f"Completed step {done} of 100")
    return "Tool with progress executed successfully"


@tool(toolset="conformance")
def test_error_handling() -> str:
    """Always fail."""
    raise RuntimeError("This tool intentionally returns an error for testing")


@tool(toolset="conformance")
def test_reconnection() -> str:
    """Take a moment, then answer (the suite resumes the stream if it breaks)."""
    time.sleep(0.1)
    return "Reconnection test completed successfully."


# A hand-written schema: @tool writes no "$schema", and this scenario checks that
# the JSON Schema 2020-12 keywords of a tool's inputSchema reach the client as given.
registry.register(
    "json_schema_2020_12_tool",
    "conformance",
    {
        "name": "json_schema_2020_12_tool",
        "description": "Tool with JSON Schema 2020-12 features",
        "parameters": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                }
            },
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": False,
        },
    },
    lambda args: f"called with {sorted(args)}",
)
