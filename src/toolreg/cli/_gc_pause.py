"""The console script starts with the garbage collector paused.

Starting a command imports over a hundred modules and registers the tools:
tens of thousands of objects that live as long as the process. While they are
made, the collector walks them again and again and finds nothing to free
(about a tenth of ``toolreg list``). :func:`pause` switches it off at the
start of ``run``; the command proper begins with :func:`resume`, which sets
everything made so far aside for good (``gc.freeze``) and switches it back
on, so a long command (``call``, ``serve``) collects its own garbage as usual.
``main`` called in-process never pauses: a host's objects are not toolreg's
to freeze.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Switch the collector off until :func:`resume`, if it is on."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Freeze what start-up made and switch the collector back on; nothing unless paused."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
