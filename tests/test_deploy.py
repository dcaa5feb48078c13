"""docs/deploy.md shows the files in deploy/ as they are, and those files agree with serve.

The HAProxy config is the one the scale-out test runs, so the doc's copy is
tested too. The others cannot run here (no Docker, Kubernetes or systemd):
what is checked is that they parse, and name the probes and flags serve has.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toolreg._mcp_serve.probes import LIVENESS_PATH, READINESS_PATH
from toolreg.cli._serve import DEFAULT_PORT

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "deploy.md"
SHOWN = re.compile(r"<!-- file: (\S+) -->\n```[a-z]*\n(.*?)```\n", re.DOTALL)


def shown_files() -> dict[str, str]:
    return dict(SHOWN.findall(DOC.read_text()))


def test_the_doc_shows_every_deploy_file_byte_for_byte() -> None:
    shown = shown_files()
    on_disk = {str(p.relative_to(ROOT)) for p in (ROOT / "deploy").iterdir()}
    assert set(shown) == on_disk
    for name, text in shown.items():
        assert (ROOT / name).read_text() == text, f"docs/deploy.md's copy of {name} differs"


def test_the_haproxy_config_checks_readiness_and_retries_only_what_never_ran() -> None:
    config = (ROOT / "deploy" / "haproxy.cfg").read_text()
    assert f"uri {READINESS_PATH} " in config
    retry_on = re.search(r"^\s*retry-on (.+)$", config, re.MULTILINE)
    assert retry_on is not None
    # Replaying a call a dead replica had started could run a tool twice.
    assert set(retry_on.group(1).split()) == {"conn-failure", "503"}
    directives = [line.split()[0] for line in config.splitlines() if line.strip()]
    affinity = {"cookie", "stick", "stick-table", "hash-type"}
    assert not affinity.intersection(directives)  # stateless: none needed


no_haproxy = pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed")


def haproxy_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLREG_LB_")}
    env["TOOLREG_LB_BIND"] = "127.0.0.1:8080"
    env.update({f"TOOLREG_REPLICA_{i}": f"127.0.0.1:800{i}" for i in (1, 2, 3)})
    return {**env, **extra}


def haproxy_check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    config = ROOT / "deploy" / "haproxy.cfg"
    return subprocess.run(
        ["haproxy", "-c", "-f", str(config)], env=env, capture_output=True, text=True
    )


@no_haproxy
def test_haproxy_accepts_the_config() -> None:
    assert haproxy_check(haproxy_env()).returncode == 0  # no stats page
    with_stats = haproxy_env(TOOLREG_LB_STATS="127.0.0.1:8404", TOOLREG_LB_STATS_AUTH="a:b")
    check = haproxy_check(with_stats)
    assert check.returncode == 0, check.stderr


def test_the_haproxy_stats_page_is_off_unless_asked_for_and_then_behind_a_password() -> None:
    config = (ROOT / "deploy" / "haproxy.cfg").read_text()
    lines = [line.strip() for line in config.splitlines()]
    stats = lines.index("listen stats")
    open_conditions: list[str] = []  # the .if blocks "listen stats" is inside
    for line in lines[:stats]:
        if line.startswith(".if "):
            open_conditions.append(line)
        elif line == ".endif":
            open_conditions.pop()
    assert open_conditions == [".if defined(TOOLREG_LB_STATS)"]
    section = lines[stats : lines.index(".endif", stats)]
    assert 'stats auth "${TOOLREG_LB_STATS_AUTH}"' in section
    # Nothing else may serve stats: no `stats enable` outside that guarded section.
    assert [line for line in lines if line.startswith("stats enable")] == ["stats enable"]


@no_haproxy
def test_haproxy_refuses_a_stats_page_without_a_password() -> None:
    check = haproxy_check(haproxy_env(TOOLREG_LB_STATS="127.0.0.1:8404"))
    assert check.returncode != 0
    assert "TOOLREG_LB_STATS_AUTH" in check.stderr


@no_haproxy
def test_haproxy_on_loopback_serves_stats_only_with_the_password(tmp_path: Path) -> None:
    import base64
    import socket
    import time
    import urllib.error
    import urllib.request

    held = [socket.socket() for _ in range(5)]
    for sock in held:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in held]
    for sock in held:
        sock.close()
    env = {
        **haproxy_env(
            TOOLREG_LB_BIND=f"127.0.0.1:{ports[0]}",
            TOOLREG_LB_STATS=f"127.0.0.1:{ports[1]}",
            TOOLREG_LB_STATS_AUTH="admin:s3cret-pw",
        ),
        **{f"TOOLREG_REPLICA_{i}": f"127.0.0.1:{ports[1 + i]}" for i in (1, 2, 3)},
    }
    config = ROOT / "deploy" / "haproxy.cfg"
    with open(tmp_path / "haproxy.log", "w") as log:
        proc = subprocess.Popen(
            ["haproxy", "-db", "-f", str(config)], env=env, stdout=log, stderr=log
        )
    url = f"http://127.0.0.1:{ports[1]}/stats;csv"

    def status(auth: str | None) -> int:
        request = urllib.request.Request(url)
        if auth is not None:
            request.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
        try:
            with urllib.request.urlopen(request, timeout=5) as reply:
                return int(reply.status)
        except urllib.error.HTTPError as exc:
            return exc.code

    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                first = status(None)
                break
            except OSError:
                assert proc.poll() is None, (tmp_path / "haproxy.log").read_text()
                assert time.monotonic() < deadline, "HAProxy never listened"
                time.sleep(0.05)
        assert first == 401
        assert status("admin:wrong") == 401
        assert status("admin:s3cret-pw") == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def unit_start_argv() -> list[str]:
    unit = (ROOT / "deploy" / "toolreg-serve@.service").read_text()
    start = re.search(r"^ExecStart=(.+)$", unit, re.MULTILINE)
    assert start is not None
    return start.group(1).split()


def test_the_unit_requires_a_token_file_and_gives_up_without_one() -> None:
    argv = unit_start_argv()
    assert "--insecure-no-auth" not in argv
    assert argv[argv.index("--auth-token-file") + 1] == "/etc/toolreg/serve.token"
    unit = (ROOT / "deploy" / "toolreg-serve@.service").read_text()
    # serve's usage error (exit 2): no token file, or one others may read.
    assert re.search(r"^RestartPreventExitStatus=2$", unit, re.MULTILINE)


@pytest.mark.parametrize("token_file", ["missing", "readable by others"])
def test_the_units_command_does_not_start_without_a_usable_token(
    tmp_path: Path, token_file: str
) -> None:
    path = tmp_path / "serve.token"
    if token_file == "readable by others":
        path.write_text("x" * 40)
        path.chmod(0o644)
    argv = unit_start_argv()
    assert argv[0] == "/opt/toolreg/bin/toolreg"
    args = [a.replace("%i", "8001") for a in argv[1:]]
    args[args.index("--auth-token-file") + 1] = str(path)
    # A token in the environment does not stand in for the file the unit names.
    env = {**os.environ, "TOOLREG_SERVE_TOKEN": "y" * 40, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "toolreg", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert f"token file {path}" in done.stderr


def test_the_doc_says_why_host_checks_are_not_authentication() -> None:
    text = DOC.read_text()
    section = text.split("### Host checks are not authentication\n", 1)[1].split("\n#", 1)[0]
    assert "Host: localhost" in section
    assert "bearer token" in section


def test_the_kubernetes_probes_and_ports_match_serve() -> None:
    yaml = pytest.importorskip("yaml")
    deployment, service = yaml.safe_load_all((ROOT / "deploy" / "kubernetes.yaml").read_text())
    assert (deployment["kind"], service["kind"]) == ("Deployment", "Service")
    assert "sessionAffinity" not in service["spec"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == READINESS_PATH
    assert container["livenessProbe"]["httpGet"]["path"] == LIVENESS_PATH
    args = container["args"]
    assert "--stateless" in args
    assert int(args[args.index("--port") + 1]) == container["ports"][0]["containerPort"]
    assert container["ports"][0]["containerPort"] == DEFAULT_PORT


def test_the_unit_and_the_image_serve_stateless_http() -> None:
    start = " ".join(unit_start_argv())
    assert "serve --transport http --stateless" in start
    assert "--port %i" in start
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert '"--stateless"' in dockerfile and f"EXPOSE {DEFAULT_PORT}" in dockerfile
