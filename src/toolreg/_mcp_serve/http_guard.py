"""Who may talk to ``toolreg serve`` over HTTP: the Host/Origin check and the bearer token.

One ASGI middleware in front of every route but the health probes (``probes``).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import os
import stat
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import TOKEN_ENV

logger = logging.getLogger("toolreg.serve")

#: Shorter tokens are refused: they can be guessed.
MIN_TOKEN_CHARS = 16
#: Characters a Host header never holds; with any of them it is refused as a whole.
_NOT_IN_AUTHORITY = frozenset("@/\\?# \t")


class TokenError(ValueError):
    """A token (file) that cannot be used; the message says what to do."""


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is loopback."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # ::ffff:127.0.0.1 reaches 127.0.0.1
    return address.is_loopback


def loopback_authority(value: str | None) -> bool:
    """Whether a Host header (``host[:port]``) names a loopback host."""
    if not value or _NOT_IN_AUTHORITY.intersection(value):
        return False
    return _loopback_url(f"//{value}")


def loopback_origin(value: str) -> bool:
    """Whether an Origin header is ``http(s)://<loopback host>[:port]``; ``null`` is not."""
    if _NOT_IN_AUTHORITY.intersection(value.partition("://")[2]):
        return False
    return urlsplit(value).scheme in ("http", "https") and _loopback_url(value)


def _loopback_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        return False
    return parts.hostname is not None and not parts.path and is_loopback_host(parts.hostname)


def check_token(token: str, source: str) -> str:
    """``token`` stripped, or TokenError if it is too short to be a secret."""
    token = token.strip()
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
        raise TokenError(
            f"the token in {source} must be at least {MIN_TOKEN_CHARS} characters with no "
            "spaces; make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
    return token


def read_token_file(path: Path) -> str:
    """The token in ``path``; refused if others may read the file (POSIX) or it is unusable."""
    try:
        info = path.stat()
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TokenError(f"cannot read the token file {path}: {exc}") from None
    if sys.platform != "win32" and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        mode = stat.S_IMODE(info.st_mode)
        raise TokenError(
            f"the token file {path} is open to group or others (mode {mode:04o}); "
            f"refusing to use it: chmod 600 {path}"
        )
    return check_token(text, str(path))


def token_from_env() -> str | None:
    """The token in ``$TOOLREG_SERVE_TOKEN``, None when unset or empty."""
    value = os.environ.get(TOKEN_ENV, "")
    return check_token(value, f"${TOKEN_ENV}") if value.strip() else None


def _digest(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


class HttpGuard:
    """ASGI middleware: the rebinding check on a loopback bind, then the bearer token."""

    def __init__(self, app: Any, *, loopback: bool, token: str | None) -> None:
        self.app = app
        self.loopback = loopback
        self._token = _digest(token.encode()) if token is not None else None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def admits(self, scope: Any) -> bool:
        """Whether the guard lets this request through; nothing is logged."""
        return self._refusal(scope, quiet=True) is None

    def _refusal(self, scope: Any, *, quiet: bool = False) -> Any:
        from starlette.datastructures import Headers
        from starlette.responses import PlainTextResponse

        log = logger.debug if quiet else logger.warning
        headers = Headers(scope=scope)
        if self.loopback:
            host = headers.get("host")
            if not loopback_authority(host):
                log("refused a request for Host %r: not a loopback host", host)
                return PlainTextResponse("Invalid Host header", status_code=421)
            origin = headers.get("origin")
            if origin is not None and not loopback_origin(origin):
                log("refused a request from Origin %r: not a loopback origin", origin)
                return PlainTextResponse("Invalid Origin header", status_code=403)
        if self._token is not None:
            scheme, _, credential = headers.get("authorization", "").partition(" ")
            presented = _digest(credential.strip().encode())
            if not (hmac.compare_digest(presented, self._token) and scheme.lower() == "bearer"):
                # Debug, not info: anyone can send these, as fast as they like.
                logger.debug("refused a request without the bearer token (%s)", scope.get("path"))
                return PlainTextResponse(
                    "Unauthorized",
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="toolreg"'},
                )
        return None
