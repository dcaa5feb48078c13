"""An isolated pack's results are capped like an MCP server's (``max_result_size_chars``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_isolation import run_host, write_config

pytest.importorskip("mcp")

from toolreg._policy.config_mcp import DEFAULT_MCP_RESULT_CHARS  # noqa: E402

BIG = """
from toolreg import registry

def big(args, **_context):
    return "x" * 30_000_000

def big_media(args, **_context):
    return {"_multimodal": True, "content": [
        {"type": "text", "text": "y" * 5_000_000},
        {"type": "image", "data": "QUFB" * 1_000_000, "mimeType": "image/png"},
    ]}

SCHEMA = {"type": "object", "properties": {}}
registry.register("big", "big", {"name": "big", "description": "30 MB",
                  "parameters": SCHEMA}, big)
registry.register("big_media", "big", {"name": "big_media", "description": "9 MB",
                  "parameters": SCHEMA}, big_media)
"""


def test_thirty_megabytes_from_an_isolated_pack_are_cut_like_an_mcp_result(
    pack_venv, tmp_path: Path
) -> None:
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "big.py").write_text(BIG)
    config = write_config(
        tmp_path,
        '[plugins]\npaths = ["plugins"]\n\n[plugins.entries."local:big"]\nisolation = "process"\n',
    )
    body = (
        "r = registry.dispatch('big', {})\n"
        "out['chars'] = len(r)\n"
        "out['tail'] = r[-60:]\n"
        "m = registry.dispatch('big_media', {})\n"
        "out['media'] = len(json.dumps(m))\n"
    )
    out = run_host(pack_venv, config, body, "local:big")
    assert out["report"]["local:big"]["status"] == "loaded"
    assert out["chars"] <= DEFAULT_MCP_RESULT_CHARS + 200
    assert "truncated" in out["tail"]
    assert out["media"] <= DEFAULT_MCP_RESULT_CHARS + 1_000
