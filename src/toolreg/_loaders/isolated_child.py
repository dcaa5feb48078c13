"""An isolated pack's process: ``python -m toolreg._loaders.isolated_child PLUGIN_ID``.

Started by :mod:`~toolreg._loaders.isolated_supervisor`, never by hand: it strips
the environment, loads the one pack into its own registry and serves it on
stdin/stdout until the parent closes stdin.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import anyio

import toolreg

from .._policy.config import Config, DispatchConfig, PluginEntryConfig, PluginsConfig
from .isolated_child_server import PackServer, StagingRegistry
from .isolated_environment import keep_only
from .isolated_wire import SPEC_ENV, PackSpec
from .plugins import PluginHost
from .report import PluginOutcome
from .stdout_guard import stdout_to_stderr

if sys.version_info < (3, 11):  # pragma: no cover - 3.10 only
    from exceptiongroup import BaseExceptionGroup


def load(spec: PackSpec, registry: StagingRegistry) -> tuple[PluginOutcome, PluginHost]:
    """Load the pack as the host would, with every override allowed: the parent judges."""
    entry = PluginEntryConfig(allow_tool_override=True, settings=dict(spec.settings))
    local = Path(spec.local_path) if spec.local_path else None
    config = Config(
        plugins=PluginsConfig(
            enabled=(spec.plugin_id,),
            paths=(local.parent,) if local is not None else (),
            entries={spec.plugin_id: entry},
            hook_timeout=0,  # the parent runs each forwarded hook under its own deadline
        ),
        dispatch=DispatchConfig(validate=spec.validate),
    )
    host = PluginHost(registry, config)
    report = host.load_all([spec.record] if spec.record is not None else [])
    registry.set_validation(spec.validate)
    # The pack's dispatch hooks run when the parent forwards them, around the
    # parent's dispatch; here they would run a second time around its own tools.
    registry.set_dispatch_hooks(None)
    outcome = report.get(spec.plugin_id)
    if outcome is None:
        where = spec.local_path or (spec.record.path if spec.record else "?")
        outcome = PluginOutcome(spec.plugin_id, "", "", "", status="failed")
        outcome.reason = f"the pack's process found no plugin {spec.plugin_id!r} at {where}"
    return outcome, host


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = os.environ.pop(SPEC_ENV, None)
    if len(argv) != 1 or text is None:
        print(
            f"usage: python -m toolreg._loaders.isolated_child PLUGIN_ID, with ${SPEC_ENV} set "
            '(toolreg starts this process itself for packs with isolation = "process")',
            file=sys.stderr,
        )
        return 2
    spec = PackSpec.from_json(text)
    if spec.plugin_id != argv[0]:
        print(f"{SPEC_ENV} is for {spec.plugin_id!r}, not {argv[0]!r}", file=sys.stderr)
        return 2
    keep_only(spec.environment)
    logging.basicConfig(
        level=logging.WARNING,
        stream=sys.stderr,
        format=f"%(levelname)s %(name)s [isolated {spec.plugin_id}]: %(message)s",
    )
    registry = StagingRegistry()
    toolreg.registry = registry  # a handler that looks it up at call time finds the pack's
    with stdout_to_stderr():  # stdout is the protocol stream: the pack's prints go to stderr
        outcome, host = load(spec, registry)
    try:
        anyio.run(PackServer(registry, outcome, host.hooks).serve_stdio)
    except BaseException as exc:
        if not parent_gone(exc):
            raise
        quiet_stdout()
        return 0
    return 0


#: What reading or writing stdio raises once the parent has gone away.
_GONE = (
    BrokenPipeError,
    ConnectionResetError,
    EOFError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
)


def parent_gone(exc: BaseException) -> bool:
    """Whether ``exc`` (or every exception in its group) says the parent closed our stdio."""
    if isinstance(exc, BaseExceptionGroup):
        return all(parent_gone(inner) for inner in exc.exceptions)
    return isinstance(exc, _GONE)


def quiet_stdout() -> None:
    """Point fd 1 at /dev/null, so the flush at exit does not report the broken pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main())
