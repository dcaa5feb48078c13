"""Pack imports under their deadline: the pack loop on one import worker, watched by the caller.

Packs are real packages on disk, loaded by a real PluginHost; a hung import is
one that waits on an event the test sets once the load is over.
"""

from __future__ import annotations

import signal
import threading
import time

import pytest

from conftest import pack_record
from toolreg import ToolRegistry, parse_config, worker_stats
from toolreg._loaders.plugins import PluginHost

# Shared by the packs of a test: the order things ran in, on which thread, and
# the event a hung import waits for.
GATE = """
import threading

EVENT = threading.Event()
LOG = []
"""

PACK = """
import threading

import pack_gate
from toolreg import hookimpl, registry

pack_gate.LOG.append(("import", "{name}", threading.current_thread().name))
if {hang}:
    pack_gate.EVENT.wait(30)
try:
    registry.register("{name}_tool", "{name}", {{}}, lambda args: "{name}")
except PermissionError:  # then the import returns as usual
    pack_gate.LOG.append(("refused", "{name}", threading.current_thread().name))
pack_gate.LOG.append(("imported", "{name}", threading.current_thread().name))
"""

SETUP = """

@hookimpl
def toolreg_configure(settings):
    pack_gate.LOG.append(("configure", "{name}", threading.current_thread().name))
    {configure}


@hookimpl
def toolreg_register_tools(registry, settings):
    pack_gate.LOG.append(("register_tools", "{name}", threading.current_thread().name))
"""


@pytest.fixture(autouse=True)
def autoload(monkeypatch):
    """The suite turns pack autoload off; these tests hand the host their packs."""
    monkeypatch.delenv("TOOLREG_DISABLE_PLUGIN_AUTOLOAD", raising=False)


@pytest.fixture
def gate(make_package):
    module = make_package("pack_gate", GATE)
    yield module
    module.EVENT.set()  # no import is left waiting after the test


def pack(make_package, name, *, hang=False, setup=False, configure="pass"):
    source = PACK.format(name=name, hang=hang)
    if setup:
        source += SETUP.format(name=name, configure=configure)
    make_package(name, source, load=False)
    return pack_record(name)


def wait_until_unstuck(stuck_before: int) -> None:
    while worker_stats()["import"]["stuck"] > stuck_before:
        time.sleep(0.01)


def test_each_pack_is_imported_then_set_up_before_the_next(make_package, gate):
    records = [pack(make_package, f"order_{c}", setup=True) for c in "ab"]
    report = PluginHost(ToolRegistry(), parse_config("")).load_all(packs=records)
    assert [o.status for o in report] == ["loaded", "loaded"]
    assert [(step, name) for step, name, _ in gate.LOG] == [
        ("import", "order_a"),
        ("imported", "order_a"),
        ("configure", "order_a"),
        ("register_tools", "order_a"),
        ("import", "order_b"),
        ("imported", "order_b"),
        ("configure", "order_b"),
        ("register_tools", "order_b"),
    ]


def test_imports_run_on_an_import_worker_and_setup_hooks_on_the_callers_thread(make_package, gate):
    # signal.signal works only on the main thread: the documented place for it is configure.
    configure = "import signal; signal.signal(signal.SIGUSR1, signal.getsignal(signal.SIGUSR1))"
    records = [pack(make_package, "where_pack", setup=True, configure=configure)]
    report = PluginHost(ToolRegistry(), parse_config("")).load_all(packs=records)
    assert report["where-pack"].status == "loaded", report["where-pack"].reason
    threads = {step: thread for step, _, thread in gate.LOG}
    assert threads["import"].startswith("toolreg-import-")
    caller = threading.current_thread().name
    assert threads["configure"] == threads["register_tools"] == caller
    assert signal.getsignal(signal.SIGUSR1) is not None


@pytest.mark.parametrize(
    ("configure", "fragment"),
    [("raise RuntimeError('bad settings')", "bad settings"), ("raise SystemExit(3)", "3")],
)
def test_a_failing_setup_hook_fails_its_pack_and_the_next_loads(
    make_package, gate, configure, fragment
):
    records = [
        pack(make_package, "setup_bad", setup=True, configure=configure),
        pack(make_package, "setup_next", setup=True),
    ]
    reg = ToolRegistry()
    report = PluginHost(reg, parse_config("")).load_all(packs=records)
    assert report["setup-bad"].status == "failed" and fragment in report["setup-bad"].reason
    assert reg.get_entry("setup_bad_tool") is None, "the failed pack's tools are rolled back"
    assert report["setup-next"].status == "loaded"
    assert reg.get_entry("setup_next_tool") is not None


def test_a_hung_import_mid_loop_fails_its_pack_and_the_rest_load_on_a_new_worker(
    make_package, gate
):
    stuck_before = worker_stats()["import"]["stuck"]
    records = [
        pack(make_package, "mid_a"),
        pack(make_package, "mid_b", hang=True, setup=True),
        pack(make_package, "mid_c", setup=True),
    ]
    reg = ToolRegistry()
    host = PluginHost(reg, parse_config("[plugins]\nimport_timeout = 0.2\n"))
    report = host.load_all(packs=records)
    assert [(o.id, o.status) for o in report] == [
        ("mid-a", "loaded"),
        ("mid-b", "failed"),
        ("mid-c", "loaded"),
    ]
    assert report["mid-b"].reason == (
        "ImportTimeout: its import did not finish within 0.2 s ([plugins] import_timeout); "
        "it may still be running"
    )
    assert worker_stats()["import"]["stuck"] == stuck_before + 1
    log = [(step, name) for step, name, _ in gate.LOG]
    assert log == [
        ("import", "mid_a"),
        ("imported", "mid_a"),
        ("import", "mid_b"),
        ("import", "mid_c"),
        ("imported", "mid_c"),
        ("configure", "mid_c"),
        ("register_tools", "mid_c"),
    ]
    importers = {name: thread for step, name, thread in gate.LOG if step == "import"}
    assert importers["mid_b"] != importers["mid_c"], "the loop went on on a new worker"

    # The hung import returns: its late registration is refused, and its worker
    # touches nothing else (no setup hook, no pluggy registration, no next pack).
    gate.EVENT.set()
    wait_until_unstuck(stuck_before)
    assert [(step, name) for step, name, _ in gate.LOG[len(log) :]] == [
        ("refused", "mid_b"),
        ("imported", "mid_b"),
    ]
    assert reg.get_entry("mid_b_tool") is None
    assert "mid_b_tool" in [d.tool for d in reg.decisions() if d.action == "rejected"]
    assert [o.status for o in host.report] == ["loaded", "failed", "loaded"]
    assert host.report["mid-b"].reason.startswith("ImportTimeout: "), "nothing redid the report"
    assert sorted(host.active) == ["mid-a", "mid-c"]
    assert all(not name.startswith("mid-b") for name, _ in host.pm.list_name_plugin())


def test_with_every_import_worker_stuck_each_pack_fails_at_once(make_package, gate):
    """The pool's bound holds: no loop worker can start, and no pack waits for one."""
    stuck_before = worker_stats()["import"]["stuck"]
    size = worker_stats()["import"]["size"]
    config = parse_config("[plugins]\nimport_timeout = 0.1\n")
    try:
        for index in range(size - stuck_before):
            name = f"stuck_{index}"
            report = PluginHost(ToolRegistry(), config).load_all(
                packs=[pack(make_package, name, hang=True)]
            )
            assert report[name.replace("_", "-")].status == "failed"
        assert worker_stats()["import"]["stuck"] == size
        records = [pack(make_package, "starved_a"), pack(make_package, "starved_b")]
        report = PluginHost(ToolRegistry(), config).load_all(packs=records)
        assert [o.status for o in report] == ["failed", "failed"]
        assert all("held by calls that ran past their deadline" in o.reason for o in report)
        assert not [name for step, name, _ in gate.LOG if name.startswith("starved")]
    finally:
        gate.EVENT.set()
        wait_until_unstuck(stuck_before)


# -- where an entry point's module is, found without running it ---------------------------


def test_locate_module_finds_files_without_importing(make_package):
    import os
    import sys

    from toolreg._loaders.pack_modules import entry_module, locate_module

    make_package("located_pack", "raise RuntimeError('must not run')\n", load=False)
    package_dir = next(p for p in sys.path if os.path.isdir(os.path.join(p, "located_pack")))
    with open(os.path.join(package_dir, "located_pack", "sub.py"), "w") as handle:
        handle.write("raise RuntimeError('must not run either')\n")
    found = locate_module(entry_module("located_pack.sub:thing [extra]"))
    assert [(name, kind) for name, kind, _ in found] == [
        ("located_pack", "file"),
        ("located_pack.sub", "file"),
    ]
    assert found[1][2].endswith(os.path.join("located_pack", "sub.py"))
    assert "located_pack" not in sys.modules
    assert locate_module("sys") == [("sys", "elsewhere", "built-in")]
    threading_file = locate_module("threading")
    assert threading_file == [("threading", "file", threading.__file__)]
    assert locate_module("no_such_module_here") == [("no_such_module_here", "missing", "")]
    assert locate_module("threading.nothing") == [
        ("threading", "file", threading.__file__),
        ("threading.nothing", "missing", ""),
    ]
