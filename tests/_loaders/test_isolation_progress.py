"""An isolated pack's progress and log messages reach the host, bounded like an MCP server's.

The pack (``toolreg-chatter`` in ``tests/dists.py``) runs in its own process;
its tools report through their ``ToolContext``, flood, send ten megabytes, and
write raw frames under tokens nobody gave them onto the protocol stream.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_isolation import isolated, run_host, write_config

pytest.importorskip("mcp")

from toolreg._mcp.upstream_relay import (  # noqa: E402
    MAX_CHARS,
    MAX_LOGS_PER_CALL,
    PROGRESS_BURST,
    PROGRESS_RATE,
)

CHATTER = "toolreg-chatter"

#: Host code: ``call(name, args)`` dispatches with a progress callback and keeps what it heard.
LISTEN = """
import logging
kept = []
class Keep(logging.Handler):
    def emit(self, record):
        kept.append({
            'logger': record.name, 'text': record.getMessage()[:80],
            'chars': len(record.getMessage()), 'mcp_level': getattr(record, 'mcp_level', None),
            'tool': getattr(record, 'tool_name', None),
        })
logging.getLogger('toolreg').addHandler(Keep())
logging.getLogger('toolreg').setLevel(logging.DEBUG)

def call(name, args):
    heard, threads = [], set()
    def progress(value, total, message):
        heard.append([value, total, message if message is None else message[-40:],
                      len(message or '')])
        threads.add(threading.get_ident())
    del kept[:]
    started = time.monotonic()
    result = registry.dispatch(name, args, progress=progress)
    took = time.monotonic() - started
    return {'result': result, 'heard': heard, 'took': took, 'logs': list(kept),
            'on_caller_thread': threads <= {threading.get_ident()}}
"""


def chatter(pack_venv, tmp_path: Path, body: str) -> dict:
    config = write_config(tmp_path, isolated(CHATTER))
    out = run_host(pack_venv, config, LISTEN + body, CHATTER)
    assert out["report"][CHATTER]["status"] == "loaded"
    return out


def test_an_isolated_tools_progress_and_log_reach_the_host(pack_venv, tmp_path) -> None:
    out = chatter(pack_venv, tmp_path, "out['chat'] = call('chat', {'steps': 3})")["chat"]
    assert out["result"] == "chatted"
    # The child keeps only the latest report waiting to be sent: the last always arrives.
    assert out["heard"][-1] == [3, 3, "step 3 of 3", len("step 3 of 3")]
    assert all(message.startswith("step ") for _, _, message, _ in out["heard"])
    assert out["on_caller_thread"], "the host's callback ran on another thread"
    logs = [log for log in out["logs"] if log["logger"] == "toolreg.tools.chat"]
    assert [log["text"] for log in logs] == ["chat step 1", "chat step 2", "chat step 3"]
    assert {(log["mcp_level"], log["tool"]) for log in logs} == {("info", "chat")}


def test_an_isolated_packs_floods_and_ten_megabytes_are_bounded(pack_venv, tmp_path) -> None:
    out = chatter(
        pack_venv,
        tmp_path,
        "out['flood'] = call('flood', {'count': 3000})\nout['huge'] = call('huge', {})",
    )
    flood = out["flood"]
    assert flood["result"] == "flooded"
    assert len(flood["heard"]) <= 2 * PROGRESS_BURST + PROGRESS_RATE * flood["took"]
    assert flood["heard"][-1][:2] == [3000, 3000]
    relayed = [log for log in flood["logs"] if log["logger"] == "toolreg.tools.flood"]
    assert len(relayed) == MAX_LOGS_PER_CALL
    (said,) = [log for log in flood["logs"] if log["logger"] == "toolreg.mcp"]
    assert "more log message(s) of flood were dropped" in said["text"]
    huge = out["huge"]
    assert huge["result"] == "huge"
    ((_, _, tail, chars),) = huge["heard"]
    assert chars <= MAX_CHARS and tail.endswith("characters]")
    (log,) = [log for log in huge["logs"] if log["logger"] == "toolreg.tools.huge"]
    assert log["chars"] <= MAX_CHARS


def test_forged_frames_and_numbers_that_are_not_finite_are_dropped(pack_venv, tmp_path) -> None:
    out = chatter(pack_venv, tmp_path, "out['forge'] = call('forge', {})")["forge"]
    assert out["result"] == "forged"
    assert out["heard"] == [[1, None, "legit", 5]]
