"""Importing the contract layer changes nothing outside it: no logger, hook or global."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r"""
import logging, pkgutil, sys, warnings
def state():
    loggers = {n: (list(l.filters), list(l.handlers), l.level)
               for n, l in logging.Logger.manager.loggerDict.items()
               if isinstance(l, logging.Logger)}
    return (loggers, list(logging.root.handlers), list(logging.root.filters),
            logging.getLogRecordFactory(), sys.excepthook, list(sys.meta_path),
            list(sys.path_hooks), list(warnings.filters), sys.getrecursionlimit())
before = state()
import toolreg._contract as contract
names = [m.name for m in pkgutil.iter_modules(contract.__path__)]
for name in names:
    __import__(f"toolreg._contract.{name}")
after = state()
# The loggers toolreg's modules name exist now; none has a filter or handler yet.
new = {n: v for n, v in after[0].items() if n not in before[0]}
assert all(v == ([], [], logging.NOTSET) for v in new.values()), new
assert {n: v for n, v in after[0].items() if n in before[0]} == before[0]
assert after[1:] == before[1:]
print(len(names))
"""


def test_importing_every_contract_module_changes_no_outside_state():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout) >= 10, "every module of the layer was imported"


def test_the_call_stamp_arrives_with_the_first_dispatcher():
    code = (
        "import logging\n"
        "from toolreg import ToolRegistry\n"
        "reg = ToolRegistry(); reg.register('t', 's', {}, lambda args: 'ok')\n"
        "print(len(logging.getLogger('toolreg.dispatch').filters))\n"
        "reg.dispatch('t', {})\n"
        "print(len(logging.getLogger('toolreg.dispatch').filters),"
        " len(logging.getLogger('toolreg.mcp').filters))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["0", "1", "1"]
