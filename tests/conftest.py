"""Shared fixtures: fresh registries, and real importable packages for policy tests."""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest
from pydantic import BaseModel, TypeAdapter

from serve_harness import HttpServer, ServeSetup
from toolreg import ToolRegistry

if TYPE_CHECKING:
    from dists import PackVenv
    from toolreg._discovery.entrypoints import PackRecord


def pytest_configure(config: pytest.Config) -> None:
    """Keep the suite off the user's caches, config and installed packs.

    `make demo` installs the example packs into the same venv; in-process tests
    must not pick them up. Pack tests run in their own venv (``pack_venv``).
    """
    os.environ["TOOLREG_CACHE_DIR"] = tempfile.mkdtemp(prefix="toolreg-test-cache-")
    os.environ["TOOLREG_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    # A width in the environment cuts the CLI's tables (pytest-xdist's workers get COLUMNS=80).
    for var in ("TOOLREG_CONFIG", "TOOLREG_PLUGINS", "COLUMNS"):
        os.environ.pop(var, None)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """Workers for ``-n auto`` (pyproject's addopts): two for the suite or a folder of it,
    none when the arguments name only files or tests (no workers to wait for; with
    ``--pdb`` there are none either way). $PYTEST_XDIST_AUTO_NUM_WORKERS still decides."""
    if "PYTEST_XDIST_AUTO_NUM_WORKERS" in os.environ:
        return None
    where = config.invocation_params.dir
    paths = [where / arg.split("::")[0] for arg in config.args]
    return 0 if paths and all(path.is_file() for path in paths) else 2


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class EvilStr(str):
    """A str whose methods a host might call raise."""

    def __str__(self) -> str:
        raise RuntimeError("str exploded")

    def __len__(self) -> int:
        raise RuntimeError("len exploded")

    def __getitem__(self, key: object) -> str:
        raise RuntimeError("getitem exploded")


class EvilDict(dict):
    """A dict whose lookups and iteration raise."""

    def get(self, *args: object) -> object:
        raise RuntimeError("get exploded")

    def __iter__(self) -> Iterator[object]:
        raise RuntimeError("iter exploded")

    def keys(self) -> object:  # type: ignore[override]
        raise RuntimeError("keys exploded")


class WeirdClass:
    """An object whose very ``__class__`` raises, so isinstance() does too."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise RuntimeError("__class__ exploded")


class BadName:
    """A would-be tool name that cannot be hashed or printed."""

    def __hash__(self) -> int:
        raise RuntimeError("hash exploded")

    def __str__(self) -> str:
        raise SystemExit(1)


# Values a sloppy type check takes for JSON: the acceptor and the compiled checks leave them to
# the validator.


class StrSub(str):
    pass


class IntSub(int):
    pass


class FloatSub(float):
    pass


class ListSub(list):  # type: ignore[type-arg]
    pass


class DictSub(dict):  # type: ignore[type-arg]
    pass


class ExplodingKey(str):
    """A key that hashes like a plain name but raises when compared with it."""

    __hash__ = str.__hash__

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq exploded")


def validator_accepts(validate: Callable[[Any], Any], value: Any) -> bool:
    """A compiled schema's verdict on ``value`` as a bool."""
    try:
        validate(value)
    except Exception:  # a refusal, or the validator failing on it: dispatch refuses both
        return False
    return True


needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlink support")

#: A string ``(a|aa)+$`` takes about 2**40 backtracking steps to give up on.
REDOS_PATTERN = "(a|aa)+$"
REDOS_TEXT = "a" * 56 + "!"


@contextmanager
def counting_thread() -> Iterator[list[int]]:
    """A second thread that counts for as long as the block runs.

    The switch interval is raised for the block, and the counter gives the GIL
    back after every step, so it only counts while the block's thread has let
    go of the GIL: in blocking I/O, or inside a regex engine that releases it.
    A match that holds the GIL leaves the count at a handful.
    """
    count = [0]
    stop = threading.Event()

    def run() -> None:
        while not stop.is_set():
            count[0] += 1
            time.sleep(0)  # releases the GIL

    previous = sys.getswitchinterval()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    sys.setswitchinterval(30.0)
    try:
        yield count
    finally:
        sys.setswitchinterval(previous)
        stop.set()
        thread.join()


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh TOOLREG_WORKSPACE root for the built-in file tools."""
    root = tmp_path / "ws"
    root.mkdir()
    monkeypatch.setenv("TOOLREG_WORKSPACE", str(root))
    return root.resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the workspace, holding secret.txt, that no tool may reach."""
    target = tmp_path / "outside"
    target.mkdir()
    (target / "secret.txt").write_text("top secret\n")
    return target.resolve()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def reg(clock: FakeClock) -> ToolRegistry:
    """A fresh registry with a hand-driven clock; never the process singleton."""
    return ToolRegistry(clock=clock)


def builtin_registry(module: ModuleType) -> ToolRegistry:
    """A fresh registry holding one built-in tool module's tools; never the process-wide one.

    The module runs again with ``toolreg.registry`` pointed at the new registry,
    as the plugin host does for a pack, so its ``registry.register`` and ``@tool``
    calls land there.
    """
    import toolreg

    fresh = ToolRegistry()
    previous = toolreg.registry
    toolreg.registry = fresh
    try:
        importlib.reload(module)
    finally:
        toolreg.registry = previous
    return fresh


def registered_strictly(module: ModuleType, name: str, toolset: str, required: list[str]):
    """The built-in tool ``name`` as ``module`` registers it, checked: owner, toolset, schema."""
    reg = builtin_registry(module)
    entry = reg.get_entry(name)
    assert entry is not None and entry.toolset == toolset
    assert reg.get_owner(name) == "builtin"
    parameters = entry.schema["parameters"]
    assert parameters["required"] == required
    assert parameters["additionalProperties"] is False
    return entry


def ok(result: str) -> dict[str, Any]:
    """A tool's JSON result that is not an error, decoded."""
    data = json.loads(result)
    assert "error" not in data, data
    return data


def err(result: str) -> str:
    """A tool_error's message."""
    data = json.loads(result)
    assert "error" in data, data
    return data["error"]


def schema(name: str, **properties: dict) -> dict:
    return {
        "name": name,
        "description": f"The {name} tool.",
        "parameters": {"type": "object", "properties": properties},
    }


@pytest.fixture
def make_package(tmp_path: Path) -> Iterator[Callable[..., ModuleType | None]]:
    """Write a real top-level package to disk, put it on sys.path, import it."""
    root = tmp_path / "site"
    root.mkdir()
    sys.path.insert(0, str(root))
    created: list[str] = []

    def make(name: str, source: str, *, load: bool = True) -> ModuleType | None:
        package = root / name
        package.mkdir()
        (package / "__init__.py").write_text(textwrap.dedent(source))
        importlib.invalidate_caches()
        created.append(name)
        return importlib.import_module(name) if load else None

    yield make
    sys.path.remove(str(root))
    for name in created:
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]


def pack_record(name: str) -> PackRecord:
    """The record of a pack ``make_package`` wrote: one entry point, its id the name dashed."""
    from toolreg._discovery.entrypoints import PackRecord

    return PackRecord(
        plugin_id=name.replace("_", "-"),
        distribution=name,
        version="1.0",
        entry_points=(("main", name),),
        requires_toolreg=None,
        path="",
    )


@pytest.fixture(scope="session")
def pack_venv_built(tmp_path_factory: pytest.TempPathFactory) -> PackVenv:
    """One venv per run: toolreg, the example packs and hostile packs, from real wheels.

    pytest-xdist's workers share one: the first to ask builds it in the run's
    shared temporary directory while the others wait.
    """
    from dists import build_pack_venv, pack_venv_once, shared_between_workers

    if shared_between_workers():
        return pack_venv_once(tmp_path_factory.getbasetemp().parent)
    return build_pack_venv(tmp_path_factory.mktemp("pack-venv"))


@pytest.fixture
def pack_venv(pack_venv_built: PackVenv) -> Iterator[PackVenv]:
    """The run's pack venv, for a test that runs it but installs nothing into it."""
    with pack_venv_built.in_use():
        yield pack_venv_built


@pytest.fixture
def pack_venv_to_change(pack_venv_built: PackVenv, request: pytest.FixtureRequest):
    """The run's pack venv, for a test that installs into it (and leaves it as it found it):
    no test in another worker uses the venv meanwhile."""
    assert "pack_venv" not in request.fixturenames, "one of the two, or the test waits on itself"
    with pack_venv_built.in_use(alone=True):
        yield pack_venv_built


@pytest.fixture
def cache_problems(monkeypatch: pytest.MonkeyPatch) -> dict[tuple[str, str], dict[str, str]]:
    """This process's record of distrusted caches, fresh for the test; read it after acting."""
    from toolreg._discovery import cache_files as _cache_files

    record: dict[tuple[str, str], dict[str, str]] = {}
    monkeypatch.setattr(_cache_files, "_problems", record)
    return record


@pytest.fixture
def serve_setup(tmp_path: Path) -> Iterator[ServeSetup]:
    """A plugin folder and config for ``toolreg serve`` subprocesses (``serve_harness``)."""
    setup = ServeSetup.create(tmp_path)
    yield setup
    setup.close()


@pytest.fixture
def http_server(serve_setup: ServeSetup) -> Iterator[Callable[..., HttpServer]]:
    """Starts ``toolreg serve --transport http`` subprocesses; stops them at teardown."""
    started: list[HttpServer] = []

    def start(*extra: str, env: dict[str, str] | None = None, serving: bool = True) -> HttpServer:
        started.append(HttpServer(serve_setup, *extra, env=env, serving=serving))
        return started[-1]

    yield start
    for server in started:
        server.stop()


#: A 1x1 PNG.
PNG_BASE64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
    "nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)


class KeptClientLog:
    """A client log (what ``toolreg serve`` binds to each call): keeps what it is sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, str | None]] = []

    def log(self, level: str, message: str, logger: str | None = None) -> bool:
        self.sent.append((level, message, logger))
        return True


class BlockingHooks:
    """Dispatch hooks of the kind an audit pack installs: they refuse greeting Mallory."""

    def before(self, name: str, args: dict) -> str | None:
        return "greeting Mallory is not allowed" if args.get("name") == "Mallory" else None

    def after(self, name: str, args: dict, result: object) -> object:
        return result


@pytest.fixture
def host_registry(reg: ToolRegistry) -> ToolRegistry:
    """A registry as a host has it: a text tool with an optional argument, an async
    tool, a multimodal one, one unavailable, and hooks that block a call."""
    greet_params = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Who to greet."},
            "punctuation": {"type": "string", "enum": ["!", "."], "default": "!"},
        },
        "required": ["name"],
        "additionalProperties": False,
    }
    reg.register(
        "greet",
        "text",
        {"description": "Greet someone.", "parameters": greet_params},
        lambda args: f"Hello, {args['name']}{args.get('punctuation', '!')}",
    )

    async def clock(args: dict) -> str:
        return "tick"

    reg.register("clock", "text", schema("clock"), clock, is_async=True)
    snap = {"_multimodal": True, "content": [
        {"type": "text", "text": "the screen"},
        {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"},
    ]}  # fmt: skip
    reg.register("snap", "media", schema("snap"), lambda args: snap)
    reg.register(
        "secret", "text", schema("secret"), lambda args: "s", requires_env="TOOLREG_TEST_UNSET"
    )
    reg.set_dispatch_hooks(BlockingHooks())
    return reg


def _materialise(value: Any) -> Any:
    """pydantic validates ``Iterable`` fields lazily; walking them validates every item."""
    if isinstance(value, Iterator):
        return [_materialise(item) for item in value]
    if isinstance(value, dict):
        return {key: _materialise(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_materialise(item) for item in value]
    return value


def conforms(typed_dict: Any, message: dict[str, Any]) -> None:
    """Valid for the SDK's TypedDict, with no key it does not know (pydantic drops those)."""
    adapter = TypeAdapter(typed_dict)  # the lazy iterators need it alive
    validated = _materialise(adapter.validate_python(message))
    assert validated == message
    json.dumps(message)  # plain JSON types only


@pytest.fixture
def host_tool() -> Iterator[Callable[..., Any]]:
    """Register host tools into the process-wide registry for one test, then remove them."""
    from toolreg import registry

    names: list[str] = []

    def add(name: str, handler: Callable[..., Any], toolset: str = "cli-test", **kwargs: Any):
        params = {"type": "object", "properties": {}}
        schema = {"name": name, "description": f"test tool {name}", "parameters": params}
        entry = registry.register(
            name=name, toolset=toolset, schema=schema, handler=handler, **kwargs
        )
        names.append(name)
        return entry

    yield add
    for name in names:
        registry.deregister(name)


class Point(BaseModel):
    x: float
    y: float


# Arguments as pydantic writes them: Point as a reference to a definition, and
# Optional[X] as a union with null.
class Plot(BaseModel):
    """Plot a point."""

    at: Point
    label: str | None = None
    near: Point | None = None


#: A tool schema with what providers differ on: $defs, a nullable union, const, a numeric enum.
RICH_SCHEMA: dict[str, Any] = {
    "name": "plot",
    "description": "Plot a point.",
    "parameters": {
        "type": "object",
        "$defs": {
            "Point": {
                "type": "object",
                "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                "required": ["x", "y"],
                "additionalProperties": False,
            }
        },
        "properties": {
            "at": {"$ref": "#/$defs/Point"},
            "label": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "kind": {"const": "scatter"},
            "size": {"type": "integer", "enum": [1, 2, 4], "description": "Marker size."},
        },
        "required": ["at", "kind"],
        "additionalProperties": False,
    },
}


@pytest.fixture
def schema_server() -> Iterator[tuple[str, list[str]]]:
    """A schema's URL on loopback, and the paths anyone fetched from it (none, we hope)."""
    from http.server import BaseHTTPRequestHandler, HTTPServer

    fetched: list[str] = []

    class Recorder(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            fetched.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/schema.json", fetched
    finally:
        server.shutdown()
        server.server_close()


#: A local plugin whose tool has a $ref and an optional nullable property: what
#: --inline-refs and --optional-as-absent reshape (CLI and serve tests).
SHAPED_PLUGIN = """
from toolreg import registry

registry.register(
    "plot",
    "shapes",
    {
        "description": "Plot a point.",
        "parameters": {
            "type": "object",
            "properties": {
                "where": {"$ref": "#/$defs/Point"},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            },
            "required": ["where"],
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}}}},
        },
    },
    lambda args: "ok",
)
"""


def approval_registry(**rules: Any) -> tuple[ToolRegistry, list[str]]:
    """A registry whose ``write_file`` records each path it ran for, under ``rules``
    (a ``[permissions]`` table): the integrations' approval tests."""
    registry = ToolRegistry()
    ran: list[str] = []

    def write(args: dict[str, Any]) -> str:
        ran.append(args["path"])
        return f"wrote {args['path']}"

    registry.register(
        "write_file", "files",
        {"name": "write_file", "description": "Write a file.",
         "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                        "required": ["path"]}},
        write,
    )  # fmt: skip
    registry.set_permissions(rules)
    return registry, ran
