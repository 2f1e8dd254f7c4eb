"""Unsharp benchmark: every schedule of ``apps/unsharp/unsharp.py`` beside
a memcpy of the output's bytes and beside the naive schedule, measured in
one run; each schedule's output is first checked bit for bit against the
naive one.

    python apps/unsharp/bench.py [--shape H W ...] [--reps 15]
                                 [--clock cpu|wall] [--only NAME ...]

Options and columns as ``apps/blur/bench.py`` (f32 images in [0, 1)).
"""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from apps.blur.bench import main  # noqa: E402
from apps.unsharp.unsharp import SCHEDULES  # noqa: E402

if __name__ == "__main__":
    main(schedules=SCHEDULES, dtype=np.float32, what="f32", doc=__doc__)
