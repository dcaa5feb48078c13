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


@pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed")
def test_haproxy_accepts_the_config() -> None:
    env = {
        **os.environ,
        "TOOLREG_LB_BIND": "127.0.0.1:8080",
        "TOOLREG_LB_STATS": "127.0.0.1:8404",
        **{f"TOOLREG_REPLICA_{i}": f"127.0.0.1:800{i}" for i in (1, 2, 3)},
    }
    config = ROOT / "deploy" / "haproxy.cfg"
    check = subprocess.run(
        ["haproxy", "-c", "-f", str(config)], env=env, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr


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
    unit = (ROOT / "deploy" / "toolreg-serve@.service").read_text()
    start = re.search(r"^ExecStart=(.+)$", unit, re.MULTILINE)
    assert start is not None
    assert "serve --transport http --stateless" in start.group(1)
    assert start.group(1).endswith("--port %i")
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert '"--stateless"' in dockerfile and f"EXPOSE {DEFAULT_PORT}" in dockerfile
