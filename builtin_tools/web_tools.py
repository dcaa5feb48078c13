"""Web tool (toolset ``web``): one HTTP GET or POST with the standard library.

HTTP error statuses are results, not failures: a 404 page is information the
model can use. Only transport problems (bad URL, refused connection, timeout)
are ``tool_error``. Redirects are followed for http/https targets only.

urllib and http.client (with ssl and email behind them) are imported by the
first request, not when the tool registers.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Annotated, Any

from toolreg import registry, tool_error, tool_result

from ._common import UNBOUNDED_HINTS, check_range, handler_of, reports_errors

if TYPE_CHECKING:
    import urllib.request

DEFAULT_MAX_BYTES = 1_000_000
MAX_MAX_BYTES = 10_000_000
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 300.0
USER_AGENT = "toolreg-http-request/0.1"
_SCHEMES = ("http", "https")


@functools.cache
def _http_only_redirects() -> type[urllib.request.HTTPRedirectHandler]:
    """The redirect handler class, defined on first use with urllib itself."""
    import urllib.error
    import urllib.parse
    import urllib.request

    class HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
        """urllib would also follow a redirect to ftp://; refuse anything but http(s)."""

        def redirect_request(
            self,
            req: urllib.request.Request,
            fp: Any,
            code: int,
            msg: str,
            headers: Any,
            newurl: str,
        ) -> urllib.request.Request | None:
            if urllib.parse.urlsplit(newurl).scheme.lower() not in _SCHEMES:
                raise urllib.error.URLError(f"refused redirect to non-http(s) URL {newurl!r}")
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    return HttpOnlyRedirects


def _read_capped(resp: Any, max_bytes: int, deadline: float) -> tuple[bytes, bool]:
    """Read at most max_bytes; reading one byte more tells us whether there was more."""
    want = max_bytes + 1
    chunks: list[bytes] = []
    got = 0
    # read1 returns what is available instead of blocking for a full buffer, so the
    # deadline is checked often even when the server drips data slowly.
    read = getattr(resp, "read1", resp.read)
    while got < want:
        chunk = read(min(65536, want - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
        if time.monotonic() > deadline:
            raise TimeoutError("response body took longer than the timeout")
    data = b"".join(chunks)
    return data[:max_bytes], len(data) > max_bytes


def _decode(data: bytes, headers: Any) -> str:
    charset = headers.get_content_charset() or "utf-8"
    try:
        return data.decode(charset, errors="replace")
    except LookupError:  # a charset name Python does not know
        return data.decode("utf-8", errors="replace")


def _joined_headers(headers: Any) -> dict[str, str]:
    # Repeated headers (Set-Cookie, Vary) are joined rather than silently dropped.
    out: dict[str, str] = {}
    for key, value in headers.items():
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


@registry.tool(
    name="http_request",
    toolset="web",
    emoji="🌐",
    # Any URL on the internet; a POST may change or delete what the server holds.
    annotations={"title": "HTTP request", **UNBOUNDED_HINTS},
)
@reports_errors
def send_http_request(
    url: Annotated[str, "Absolute http:// or https:// URL."],
    # Not a Literal: lower-case "post" has always been accepted from Python callers.
    method: Annotated[str, {"enum": ["GET", "POST"]}, "GET or POST."] = "GET",
    headers: Annotated[
        dict[str, str] | None, 'Extra request headers, e.g. {"Accept": "application/json"}.'
    ] = None,
    body: Annotated[
        str | None,
        "Request body for POST, sent as UTF-8. Set Content-Type in headers (urllib "
        "defaults to application/x-www-form-urlencoded).",
    ] = None,
    timeout: Annotated[
        float,
        {"exclusiveMinimum": 0, "maximum": MAX_TIMEOUT},
        "Seconds allowed for connecting and reading the response.",
    ] = DEFAULT_TIMEOUT,
    max_bytes: Annotated[
        int, {"minimum": 1, "maximum": MAX_MAX_BYTES}, "Maximum number of body bytes to read."
    ] = DEFAULT_MAX_BYTES,
) -> str:
    """Make an HTTP GET or POST request to an http:// or https:// URL.

    Returns the response as JSON `{url, status, headers, body, truncated}`. 4xx/5xx responses
    are returned normally with their status; only network failures are errors. `body` is
    decoded as text using the response charset (UTF-8 by default), so binary content arrives
    garbled. At most `max_bytes` of the body are read; `truncated` says whether there was
    more. Redirects are followed. `url` is the final URL after redirects.
    """
    import http.client
    import urllib.error
    import urllib.parse
    import urllib.request

    url = url.strip()
    method = method.upper()
    check_range("timeout", timeout, minimum=0, maximum=MAX_TIMEOUT, exclusive_minimum=True)
    check_range("max_bytes", max_bytes, minimum=1, maximum=MAX_MAX_BYTES)
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() not in _SCHEMES or not parts.netloc:
        return tool_error(f"only http:// and https:// URLs are allowed, got {url!r}")
    if method not in ("GET", "POST"):
        return tool_error(f"method must be GET or POST, got {method!r}")
    if body is not None and method == "GET":
        return tool_error("a body can only be sent with method POST")

    data = body.encode("utf-8") if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("User-Agent", USER_AGENT)
    for key, value in (headers or {}).items():
        request.add_header(key, value)  # after the default, so the caller's value wins
    opener = urllib.request.build_opener(_http_only_redirects())
    deadline = time.monotonic() + timeout
    try:
        try:
            resp = opener.open(request, timeout=timeout)
        except urllib.error.HTTPError as exc:
            # A 4xx/5xx answer is still a response, with a status and usually a body.
            return _result(exc, exc.code, exc.filename, max_bytes, deadline)
        return _result(resp, resp.status, resp.geturl(), max_bytes, deadline)
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            return tool_error(f"request to {url} timed out after {timeout:g}s")
        return tool_error(f"request to {url} failed: {exc.reason}")
    except TimeoutError:
        return tool_error(f"request to {url} timed out after {timeout:g}s")
    except (http.client.HTTPException, OSError, ValueError) as exc:
        return tool_error(f"request to {url} failed: {type(exc).__name__}: {exc}")


def _result(resp: Any, status: int, final_url: str, max_bytes: int, deadline: float) -> str:
    # An HTTPError built without a body has fp None and cannot be read or closed.
    has_body = getattr(resp, "fp", None) is not None
    try:
        raw, truncated = _read_capped(resp, max_bytes, deadline) if has_body else (b"", False)
    finally:
        if has_body:
            resp.close()
    return tool_result(
        url=final_url,
        status=status,
        headers=_joined_headers(resp.headers),
        body=_decode(raw, resp.headers),
        truncated=truncated,
    )


#: The registered handler, for callers holding the model's JSON arguments.
http_request = handler_of(send_http_request)
