"""The ``pack`` docstring example runs as written (issue 34 item 9: it used
``p`` before defining it) and shows the layouts its comments describe."""
from __future__ import annotations

import re
import runpy
import textwrap

from exo_hl.stdlib import pack


def test_pack_docstring_example_runs(tmp_path):
    doc = pack.__doc__
    block = re.search(r"Example::\n\n((?:\s{8}.*\n|\n)+)", doc).group(1)
    src = ("from __future__ import annotations\n"
           "from exo_hl import f32, proc, seq, size\n"
           "from exo_hl.stdlib import pack\n\n" + textwrap.dedent(block))
    path = tmp_path / "pack_example.py"
    path.write_text(src)
    ns = runpy.run_path(str(path))
    assert "B_pack: f32[K, 16]" in str(ns["p"])
    assert "B_pack[i0, i1] = B[i0, i1]" in str(ns["p"])
    assert "B_pack: f32[16, K]" in str(ns["q"])
    assert "B_pack[i1, i0] = B[i0, i1]" in str(ns["q"])
    assert "B_pack[j, k]" in str(ns["q"])
