"""The compiled module of toolreg-speedups, if it may be used.

``toolreg-core[speedups]`` installs one C module, ``toolreg_speedups._hot``:
the compiled dispatch (``_dispatch/compiled.py``), the registration pre-check
(``schema_checks``), the entry maker (``_contract/entry``) and the table's
writer of a host's reload (``_core/table``) call it. All ask here, so one
switch and one set of rules govern them all. It is not used when
``TOOLREG_NO_EXTENSIONS`` is set (to anything but empty or ``0``, like
TOOLREG_DISABLE_PLUGIN_AUTOLOAD), off CPython, on a free-threaded build (the C
code relies on the GIL), or when the installed module's ``ABI`` is not the one
this toolreg was written for.
"""

from __future__ import annotations

import logging
import os
import sys
from types import ModuleType

logger = logging.getLogger("toolreg.speedups")

#: The ``ABI`` of toolreg_speedups._hot this toolreg calls: bumped on any change of
#: its functions, a constructor's arguments or the layout of the hot tuple
#: (``_dispatch/dispatch_plan.Hot``).
ABI = 4
#: Set (to anything but empty or ``0``) to keep toolreg in Python with
#: toolreg-speedups installed.
DISABLE_ENV = "TOOLREG_NO_EXTENSIONS"


def compiled_module() -> ModuleType | None:
    """``toolreg_speedups._hot`` when it is installed and may be used, else None.

    The environment is read on every call: each caller asks when it decides
    (the dispatch once per dispatcher, the registration check once).
    """
    if os.environ.get(DISABLE_ENV, "") not in ("", "0") or sys.implementation.name != "cpython":
        return None
    if not getattr(sys, "_is_gil_enabled", lambda: True)():
        return None
    try:
        from toolreg_speedups import _hot
    except ImportError:
        return None
    if getattr(_hot, "ABI", None) != ABI:
        logger.warning(
            "toolreg-speedups is installed but built for another toolreg (ABI %r, not %r): "
            "it is not used, toolreg stays in Python; install the matching version",
            getattr(_hot, "ABI", None),
            ABI,
        )
        return None
    return _hot
