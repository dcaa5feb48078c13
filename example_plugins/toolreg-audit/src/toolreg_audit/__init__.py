"""toolreg-audit: a JSONL audit log of every tool call, and an operator block list.

This pack registers no tools; it only implements hooks:

- ``toolreg_configure`` reads ``log_path`` and ``block`` from
  ``[plugins.entries.toolreg-audit.settings]``;
- ``toolreg_pre_tool_call`` blocks the tools named in ``block`` and logs the
  attempt; for every other call it makes sure the log file is open;
- ``toolreg_post_tool_call`` appends one JSON line per finished call.

A log that cannot be opened or written raises, and the loader treats a raising
dispatch hook as a veto (fail closed): a log that cannot be opened stops the
call before the tool runs; a failed write after the call withholds its result.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from toolreg import hookimpl, is_tool_error

__all__ = ["AuditLog", "toolreg_configure", "toolreg_post_tool_call", "toolreg_pre_tool_call"]

PLUGIN_ID = "toolreg-audit"
LOG_ENV = "TOOLREG_AUDIT_LOG"
DEFAULT_LOG_NAME = "toolreg-audit.jsonl"


class AuditLog:
    """An append-only JSONL file, written one whole line at a time under a lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._file: IO[str] | None = None

    def ensure_open(self) -> None:
        """Open the file now if it is not open; raise OSError if it cannot be."""
        with self._lock:
            self._open()

    def write(self, record: Mapping[str, Any]) -> None:
        """Append ``record`` as one line; raise OSError if it cannot be written."""
        # default=repr: a host may pass arguments that are not JSON (a Path, bytes);
        # they are logged by repr rather than failing the call.
        line = json.dumps(record, ensure_ascii=False, default=repr) + "\n"
        with self._lock:
            try:
                self._open().write(line)
            except BaseException:
                # Drop the handle so the next call reopens (the disk may recover).
                self._close()
                raise

    def _open(self) -> IO[str]:
        if self._file is None:
            # Append mode, so other writers' lines are never overwritten;
            # line-buffered, so each record is flushed as its newline is written
            # and a crash of the host process loses nothing already logged.
            self._file = open(self.path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115
        return self._file

    def close(self) -> None:
        """Close the file; the next write reopens it."""
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._file is not None:
            # A handle that failed to flush is being abandoned anyway.
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None


def default_log_path() -> Path:
    """``$TOOLREG_AUDIT_LOG``, else ``toolreg-audit.jsonl`` in the current directory."""
    return Path(os.environ.get(LOG_ENV) or DEFAULT_LOG_NAME).expanduser().absolute()


# Set by toolreg_configure; until then (a host calling the hooks without the
# loader) the defaults apply.
_log: AuditLog | None = None
_block: frozenset[str] = frozenset()
_config_lock = threading.Lock()


def _setting_error(key: str, expected: str, value: Any) -> ValueError:
    return ValueError(
        f"plugins.entries.{PLUGIN_ID}.settings.{key}: expected {expected}, got {value!r}"
    )


@hookimpl
def toolreg_configure(settings: Mapping[str, Any]) -> None:
    """Apply ``log_path`` (a file path) and ``block`` (tool names) from the operator's settings."""
    global _log, _block
    unknown = sorted(set(settings) - {"log_path", "block"})
    if unknown:
        # A typo such as "blocked" must not silently leave tools unblocked.
        raise ValueError(
            f"plugins.entries.{PLUGIN_ID}.settings: unknown key(s) {', '.join(unknown)}; "
            "expected: block, log_path"
        )
    raw_path = settings.get("log_path")
    if raw_path is not None and (not isinstance(raw_path, str) or not raw_path.strip()):
        raise _setting_error("log_path", "a file path", raw_path)
    block = settings.get("block", [])
    if not isinstance(block, list) or not all(isinstance(n, str) and n for n in block):
        raise _setting_error("block", "an array of tool names", block)
    # Made absolute now, so a later chdir in the host does not split the log.
    path = Path(raw_path).expanduser().absolute() if raw_path else default_log_path()
    with _config_lock:
        if _log is not None:
            _log.close()
        _log = AuditLog(path)
        _block = frozenset(block)


def audit_log() -> AuditLog:
    """The log records go to (the default one when the pack was never configured)."""
    global _log
    with _config_lock:
        if _log is None:
            _log = AuditLog(default_log_path())
        return _log


def blocked_tools() -> frozenset[str]:
    """The tool names the operator blocked."""
    return _block


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _result_chars(result: Any) -> int:
    if isinstance(result, str):
        return len(result)
    return len(json.dumps(result, ensure_ascii=False, default=repr))


def block_message(name: str) -> str:
    """What the model is told when ``name`` is blocked."""
    return f"Tool {name!r} is blocked by the operator's audit policy ({PLUGIN_ID})"


@hookimpl
def toolreg_pre_tool_call(name: str, args: dict[str, Any]) -> str | None:
    """Block (and log) a call to a tool in the block list; let everything else through."""
    log = audit_log()
    if name not in _block:
        # Opening the log before the tool runs means a log path that cannot be
        # written blocks the call up front, instead of after its side effects.
        log.ensure_open()
        return None
    message = block_message(name)
    log.write(
        {
            "ts": _now(),
            "tool": name,
            "args": args,
            "ok": False,
            "result_chars": 0,  # no handler ran, so there is no result
            "blocked": True,
            "message": message,
        }
    )
    return message


@hookimpl
def toolreg_post_tool_call(name: str, args: dict[str, Any], result: Any) -> None:
    """Append one line for a finished call."""
    audit_log().write(
        {
            "ts": _now(),
            "tool": name,
            "args": args,
            "ok": not is_tool_error(result),
            "result_chars": _result_chars(result),
            "blocked": False,
        }
    )
