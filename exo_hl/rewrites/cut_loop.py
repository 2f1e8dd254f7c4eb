"""``cut_loop(loop, cut)``: Exo's spelling of ``partition_loop``.

``for i in seq(lo, hi): s`` becomes ``for i in seq(lo, cut): s`` then
``for i in seq(cut, hi): s``; ``cut`` is the absolute index where the second
loop starts (an int or a control expression string), as in Exo. The checks
are ``partition_loop``'s: ``lo <= cut <= hi`` is proven, and the bounds and
the cut may not read configuration state the body writes.
"""
from __future__ import annotations

from .partition_loop import partition_loop


def cut_loop(proc, loop, cut):
    return partition_loop(proc, loop, cut)
