"""toolreg-sandbox: a stricter ``terminal`` that replaces the built-in one (toolset ``sandbox``).

The command line is split like a shell would split words (``shlex``), but no
shell ever runs it: pipes, redirects, ``;``, ``&&``, globs and ``$VARS`` reach
the program as plain arguments. The program must be on an allowlist, runs in
the workspace root with a scrubbed environment, at most 10 seconds, and each
output stream is cut at 8,000 characters.

Importing this module registers ``terminal`` with ``override=True``. The
loader only lets that through when the operator set
``[plugins.entries.toolreg-sandbox] allow_tool_override = true``; otherwise it
refuses the pack and the built-in terminal stays.

This narrows what a model can do; it is not an isolation boundary. An allowed
program can still read any file the host user can (``cat /etc/hosts``).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from toolreg import hookimpl, registry, tool_error, tool_result
from toolreg.workspace import WORKSPACE_ENV, WorkspaceError, workspace_root

from ._run import MAX_STREAM_CHARS, run_program

__all__ = ["terminal", "toolreg_configure"]

TOOLSET = "sandbox"
PLUGIN_ID = "toolreg-sandbox"
DEFAULT_ALLOW = ("ls", "cat", "echo", "pwd", "head", "tail", "wc", "grep", "date", "true", "false")
DEFAULT_TIMEOUT = 5.0
MAX_TIMEOUT = 10.0
#: The only environment variables a program sees.
ENV_KEEP = ("PATH", "HOME", "LANG", "LC_ALL", "TOOLREG_WORKSPACE")

# Replaced as a whole by toolreg_configure; readers take one reference, so a
# call never sees half an update.
_allow: frozenset[str] = frozenset(DEFAULT_ALLOW)


def _parse_allow(value: Any) -> frozenset[str]:
    key = f"plugins.entries.{PLUGIN_ID}.settings.allow"
    if not isinstance(value, list):
        raise ValueError(f"{key}: expected an array of program names, got {value!r}")
    for name in value:
        # Names only: then no command given as a path ("./x", "/bin/sh") can match,
        # and every program is found on the scrubbed PATH.
        if not isinstance(name, str) or not name or any(c in name for c in "/\\ \t\n\0"):
            raise ValueError(f"{key}: expected bare program names such as 'ls', got {name!r}")
    return frozenset(value)


@hookimpl
def toolreg_configure(settings: Mapping[str, Any]) -> None:
    """Apply ``[plugins.entries.toolreg-sandbox.settings]``: ``allow = [...]`` programs."""
    global _allow
    unknown = sorted(set(settings) - {"allow"})
    if unknown:
        # A typo such as "allowed" must not silently leave the default list in force.
        raise ValueError(
            f"plugins.entries.{PLUGIN_ID}.settings: unknown key(s) {', '.join(unknown)}; "
            "expected: allow"
        )
    _allow = _parse_allow(settings["allow"]) if "allow" in settings else frozenset(DEFAULT_ALLOW)


def allowed_programs() -> list[str]:
    """The programs the terminal may run now, sorted."""
    return sorted(_allow)


def _scrubbed_env(root: Path) -> dict[str, str]:
    env = {key: os.environ[key] for key in ENV_KEEP if key in os.environ}
    env.setdefault("PATH", os.defpath)
    env[WORKSPACE_ENV] = str(root)  # the resolved root, even when it came from cwd
    return env


def _timeout_arg(value: Any) -> float:
    if value is None:
        return DEFAULT_TIMEOUT
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"argument 'timeout' must be a number, got {value!r}")
    try:
        timeout = float(value)
    except ValueError:
        raise ValueError(f"argument 'timeout' must be a number, got {value!r}") from None
    if not 0 < timeout <= MAX_TIMEOUT:  # also rejects NaN
        raise ValueError(
            f"argument 'timeout' must be greater than 0 and at most {MAX_TIMEOUT:g}, got {value!r}"
        )
    return timeout


def _split(command: Any) -> list[str]:
    if not isinstance(command, str):
        raise ValueError(f"argument 'command' must be a string, got {type(command).__name__}")
    if "\0" in command:
        raise ValueError("command must not contain NUL bytes")
    try:
        argv = shlex.split(command)
    except ValueError as exc:  # e.g. "No closing quotation"
        raise ValueError(f"cannot split the command into words: {exc}") from None
    if not argv:
        raise ValueError("command must not be empty")
    return argv


def _join(names: Iterable[str]) -> str:
    return ", ".join(names) or "(none)"


def terminal(args: dict[str, Any] | None = None, **_: Any) -> str:
    """Run one allowlisted program, without a shell, in the workspace root."""
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return tool_error(f"arguments must be a JSON object, got {type(args).__name__}")
    allow = _allow
    try:
        argv = _split(args.get("command"))
        timeout = _timeout_arg(args.get("timeout"))
    except ValueError as exc:
        return tool_error(str(exc))
    program = argv[0]
    if program not in allow:
        return tool_error(
            f"Program {program!r} is not allowed in the sandbox terminal "
            f"(allowed: {_join(sorted(allow))}). Commands run without a shell, so "
            "pipes, redirects, ';' and '&&' are not available either."
        )
    try:
        root = workspace_root()
        env = _scrubbed_env(root)
        # Looked up on the scrubbed PATH: the one the program itself will see.
        executable = shutil.which(program, path=env["PATH"])
        if executable is None:
            return tool_error(f"Program {program!r} is allowed but was not found on PATH")
        result = run_program(argv, executable, cwd=root, env=env, timeout=timeout)
    except WorkspaceError as exc:
        return tool_error(str(exc))
    except (OSError, subprocess.SubprocessError) as exc:
        return tool_error(f"{type(exc).__name__}: {exc}")
    return tool_result(result)


def _description() -> str:
    return (
        "Run one program in the workspace root, WITHOUT a shell, and wait for it. The "
        "command is split into words like a shell would (quotes group words), but pipes, "
        "redirects, ';', '&&', globs, '~' and $VARIABLES are passed to the program as plain "
        f"text. Allowed programs: {_join(allowed_programs())}. stdin is empty; the "
        f"environment holds only {', '.join(ENV_KEEP)}. Returns JSON `{{exit_code, stdout, "
        f"stderr, timed_out}}`; each stream is cut at {MAX_STREAM_CHARS:,} characters. On "
        f"timeout (default {DEFAULT_TIMEOUT:g} s, max {MAX_TIMEOUT:g} s) the program and its "
        "children are killed and timed_out is true."
    )


def _schema_overrides() -> dict[str, Any]:
    # The allowlist is operator config applied after registration, so the
    # description the model reads is rebuilt from the live value.
    return {"description": _description()}


registry.register(
    name="terminal",
    toolset=TOOLSET,
    schema={
        "name": "terminal",
        "description": _description(),
        "parameters": {
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "Program and arguments, e.g. `grep -n TODO notes.txt`.",
                },
                "timeout": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "maximum": MAX_TIMEOUT,
                    "default": DEFAULT_TIMEOUT,
                    "description": f"Seconds before the program is killed (max {MAX_TIMEOUT:g}).",
                },
            },
            "required": ["command"],
            "additionalProperties": False,
        },
    },
    handler=terminal,
    description="Run an allowlisted program (no shell) in the workspace; a stricter terminal.",
    emoji="🔒",
    dynamic_schema_overrides=_schema_overrides,
    override=True,
)
