"""Effect-analysis cost with config-writing calls in loop nests.

Found by the schedule fuzzer's config corpus: after splitting a loop that
calls a procedure writing a config field, fissioning the call out of the
nest gives solver queries whose terms share sub-terms so much that their
tree size is exponential; when the SMT bridge hashed and translated them
as trees, ``fission_after`` -- then the bounds check of its result -- did
not finish. The run happens in a subprocess with a time limit so that the
suite cannot hang.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

_SCRIPT = textwrap.dedent('''
    from __future__ import annotations
    from exo_hl import SchedulingError, config, f32, index, proc, seq, size

    @config
    class BlowCfg:
        k: index

    @proc
    def set_k(k: index, y: [f32][8]):
        assert 0 <= k and k < 4
        BlowCfg.k = 7
        for i in seq(k, 4):
            y[i] += 1.0

    @proc
    def calls(N: size, x: f32[N], y: f32[8]):
        BlowCfg.k = 2
        for i in seq(0, 2):
            set_k(BlowCfg.k - 2 + i, y[0:8])
            BlowCfg.k = 2

    p = calls.split("i", 4, "o1", "n2", tail="guard")
    p = p.split("n2", 1, "o3", "n4", tail="cut")
    try:
        p.fission_after(p.find("set_k(_)"), n_lifts=2)
    except SchedulingError:
        pass
    print("done")
''')


@pytest.mark.slow
def test_fission_of_config_writing_call_out_of_split_nest_finishes(tmp_path):
    script = tmp_path / "blowup.py"     # @proc reads the function's source
    script.write_text(_SCRIPT)
    try:
        r = subprocess.run([sys.executable, str(script)],
                           capture_output=True, text=True, timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail("fission_after did not finish in 15 s")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "done"
