"""``toolreg serve`` over HTTP against hostile clients: Host/Origin checks and the bearer token.

Every server here is a real ``toolreg serve`` subprocess on a loopback address;
requests are raw HTTP (to send the headers a browser under DNS rebinding would)
or the MCP SDK's own client.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from serve_harness import HttpServer, ServeSetup, run, text_of

pytest.importorskip("mcp")

import httpx2  # noqa: E402  (after the importorskip: httpx2 comes with mcp)
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from toolreg._mcp_serve.http_guard import (  # noqa: E402
    is_loopback_host,
    loopback_authority,
    loopback_origin,
)
from toolreg.cli import main  # noqa: E402

TOKEN = "s3cret-token-for-tests-0123456789"
BEARER = {"Authorization": f"Bearer {TOKEN}"}

# -- what counts as loopback ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.255.0.9", True),
        ("::1", True),
        ("0:0:0:0:0:0:0:1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        ("LocalHost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.2", False),
        ("localhost.attacker.example", False),
        ("myhost", False),
    ],
)
def test_loopback_hosts_are_recognised(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


@pytest.mark.parametrize(
    ("header", "allowed"),
    [
        ("127.0.0.1:8765", True),
        ("127.0.0.2", True),
        ("localhost:1", True),
        ("[::1]:8765", True),
        ("[0:0:0:0:0:0:0:1]:8765", True),
        ("attacker.example:8765", False),
        ("127.0.0.1.attacker.example", False),
        ("attacker@127.0.0.1", False),
        ("127.0.0.1:port", False),
        ("127.0.0.1/x", False),
        ("", False),
        (None, False),
    ],
)
def test_host_headers(header: str | None, allowed: bool) -> None:
    assert loopback_authority(header) is allowed


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://localhost:6274", True),
        ("https://127.0.0.5", True),
        ("http://[::1]:3000", True),
        ("null", False),
        ("http://attacker.example", False),
        ("http://localhost.attacker.example", False),
        ("http://user@localhost", False),
        ("file://", False),
        ("ftp://localhost", False),
    ],
)
def test_origin_headers(origin: str, allowed: bool) -> None:
    assert loopback_origin(origin) is allowed


# -- DNS rebinding -------------------------------------------------------------------------


async def list_names(url: str, headers: dict[str, str] | None = None) -> set[str]:
    async with (
        httpx2.AsyncClient(headers=headers or {}) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        return {tool.name for tool in (await client.list_tools()).tools}


@pytest.mark.parametrize("bind", ["127.0.0.2", "0:0:0:0:0:0:0:1", "localhost", "127.0.0.1"])
def test_rebinding_is_refused_on_every_loopback_address(
    http_server: Callable[..., HttpServer], bind: str
) -> None:
    server = http_server("--host", bind)
    port = server.authority.rpartition(":")[2]
    rebound = {"Host": f"attacker.example:{port}"}
    assert server.status("GET", "/mcp", rebound) == 421
    assert server.status("POST", "/mcp", rebound) == 421
    assert server.status("GET", "/mcp", {"Origin": "http://attacker.example"}) == 403
    assert server.status("POST", "/mcp", {"Origin": "null"}) == 403
    # Probes answer anyone (test_mcp_probes.py), but what is offered only past the guard.
    assert server.probe("/healthz", rebound) == (200, {"status": "ok"})
    for spelling in ("localhost", "127.0.0.1", "127.9.9.9", "[::1]", "[0:0:0:0:0:0:0:1]"):
        assert "tools" in server.health({"Host": f"{spelling}:{port}"})
    assert "tools" in server.health({"Origin": f"http://localhost:{port}"})

    async def session() -> None:
        assert "greet" in await list_names(server.url)

    run(session)


# -- the bearer token ----------------------------------------------------------------------


def token_file(setup: ServeSetup, mode: int = 0o600, token: str = TOKEN) -> Path:
    path = setup.tmp / "serve.token"
    path.write_text(token + "\n")
    path.chmod(mode)
    return path


@pytest.mark.parametrize("source", ["file", "env"])
def test_with_a_token_every_request_needs_it(
    serve_setup: ServeSetup, http_server: Callable[..., HttpServer], source: str
) -> None:
    if source == "file":
        server = http_server("--auth-token-file", str(token_file(serve_setup)))
    else:
        server = http_server(env={"TOOLREG_SERVE_TOKEN": TOKEN})
    assert server.probe("/healthz") == (200, {"status": "ok"})  # status only, no details
    for method, path in (("POST", "/mcp"), ("GET", "/mcp"), ("DELETE", "/mcp")):
        assert server.status(method, path, {}) == 401
        assert server.status(method, path, {"Authorization": f"Bearer {TOKEN}x"}) == 401
        assert server.status(method, path, {"Authorization": f"Bearer {TOKEN[:-1]}"}) == 401
        assert server.status(method, path, {"Authorization": f"Basic {TOKEN}"}) == 401
    assert server.health(BEARER)["tools"] >= 3

    async def session() -> None:
        assert "greet" in await list_names(server.url, BEARER)
        async with (
            httpx2.AsyncClient(headers=BEARER) as http,
            Client(streamable_http_client(server.url, http_client=http), mode="legacy") as legacy,
        ):
            assert text_of(await legacy.call_tool("greet", {"name": "T"})) == "hello T"
        with pytest.raises(Exception):  # noqa: B017 - the SDK's error for a 401 varies by era
            await list_names(server.url)

    run(session)


@pytest.fixture
def refused(
    serve_setup: ServeSetup, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., str]:
    """``toolreg serve --transport http`` with the given options, in this process: it must
    exit 2 before serving; its stderr. Its port is one already taken, so a serve that
    failed to refuse could not listen either (exit 1) instead of serving on."""

    def attempt(*extra: str, env: dict[str, str] | None = None) -> str:
        with monkeypatch.context() as patch, socket.socket() as taken:
            patch.delenv("TOOLREG_SERVE_TOKEN", raising=False)
            for name, value in (env or {}).items():
                patch.setenv(name, value)
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = str(taken.getsockname()[1])
            argv = ["serve", "--config", str(serve_setup.config), "--transport", "http"]
            code = main([*argv, "--port", port, *extra])
        err = capsys.readouterr().err
        assert code == 2, err
        assert " at http" not in err  # it never served
        return err

    return attempt


def test_a_non_loopback_address_needs_a_token_or_an_explicit_opt_out(
    refused: Callable[..., str],
) -> None:
    # 192.0.2.1 is a documentation address: nothing here could bind it anyway.
    err = refused("--host", "192.0.2.1")
    assert "refusing to serve 192.0.2.1" in err
    assert "--auth-token-file" in err and "TOOLREG_SERVE_TOKEN" in err
    assert "--insecure-no-auth" in err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644])
def test_a_token_file_others_may_read_is_refused(
    serve_setup: ServeSetup, refused: Callable[..., str], mode: int
) -> None:
    path = token_file(serve_setup, mode)
    err = refused("--auth-token-file", str(path))
    assert f"mode {mode:04o}" in err and f"chmod 600 {path}" in err


def test_unusable_tokens_are_refused(serve_setup: ServeSetup, refused: Callable[..., str]) -> None:
    missing = serve_setup.tmp / "missing.token"
    assert "cannot read the token file" in refused("--auth-token-file", str(missing))
    short = token_file(serve_setup, token="short")
    assert "at least 16 characters" in refused("--auth-token-file", str(short))
    assert "at least 16" in refused(env={"TOOLREG_SERVE_TOKEN": "short"})
    err = refused("--insecure-no-auth", env={"TOOLREG_SERVE_TOKEN": TOKEN})
    assert "contradicts" in err
