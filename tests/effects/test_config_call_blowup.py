"""Effect-analysis cost with config-writing calls in loop nests.

Found by the schedule fuzzer's config corpus: after splitting a loop that
calls a procedure writing a config field, fissioning the call out of the
nest gives solver queries whose terms share sub-terms so much that their
tree size is exponential; when the SMT bridge hashed and translated them
as trees, ``fission_after`` -- then the bounds check of its result -- did
not finish. The run happens in a subprocess with a limit on its CPU time
(not the wall clock, which a loaded machine stretches) so that the suite
cannot hang.
"""
from __future__ import annotations

import resource
import signal
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


_CPU_S = 20


@pytest.mark.slow
def test_fission_of_config_writing_call_out_of_split_nest_finishes(tmp_path):
    script = tmp_path / "blowup.py"     # @proc reads the function's source
    script.write_text(_SCRIPT)
    def cpu_limit():                    # seconds of CPU, not of wall clock
        resource.setrlimit(resource.RLIMIT_CPU, (_CPU_S, _CPU_S + 5))

    try:
        r = subprocess.run([sys.executable, str(script)], capture_output=True,
                           text=True, timeout=600, preexec_fn=cpu_limit)
    except subprocess.TimeoutExpired:
        pytest.fail("fission_after did not finish in 600 s of wall clock")
    if r.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        pytest.fail(f"fission_after did not finish in {_CPU_S} s of CPU time")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "done"


# ---------------------------------------------------------------------------
# Shared effect expressions. A config value after a loop nest names the
# value before it several times, so nested levels give DAGs whose tree size
# is exponential in their depth (a configwrite_at in a tiled, parallelized
# nest once took minutes). Each walk below must cost in proportion to the
# DAG: counted by the nodes built and the keys hashed, not by the clock.

_DEPTH = 12     # tree size 3**12 = 531441 per chain; DAG size 3 * 12


class _CountedKey:
    """A variable key that counts how often it is hashed."""

    hashes = 0

    def __init__(self, name):
        self.name = name

    def __hash__(self):
        _CountedKey.hashes += 1
        return hash(self.name)

    def __eq__(self, other):
        return self is other


def _chain(x, depth=_DEPTH):
    """x_{k+1} = (x_k < 5) ? x_k + 1 : x_k -- each level names x_k thrice."""
    from exo_hl.effects import eexpr as E
    for _ in range(depth):
        x = E.ite(E.op("<", x, E.const(5)), E.op("+", x, E.const(1)), x)
    return x


def test_subst_rebuilds_each_shared_node_once(monkeypatch):
    from exo_hl.core_ir.syms import Sym
    from exo_hl.effects import eexpr as E
    n, m = Sym("n"), Sym("m")
    e = _chain(E.var(n))
    built = [0]
    op, ite = E.op, E.ite

    def count(fn):
        def wrapped(*args):
            built[0] += 1
            return fn(*args)
        return wrapped
    monkeypatch.setattr(E, "op", count(op))
    monkeypatch.setattr(E, "ite", count(ite))
    r = E.subst(e, {n: E.var(m)})
    assert built[0] <= 3 * _DEPTH
    # the same shape over m; an unrelated substitution keeps the node
    assert E.free_keys(r) == {m}
    assert r[1][2] is r[2][2] is r[3]
    assert E.subst(e, {m: E.const(0)}) is e


def test_smt_encoding_of_a_shared_expression_hashes_little():
    from exo_hl.effects import eexpr as E
    from exo_hl.effects import smt as S
    k = _CountedKey("k")
    e = E.eq(_chain(E.var(k)), E.const(7))
    _CountedKey.hashes = 0
    S.collapse_D(e)
    S.collapse_M(E.forall(k, E.op("<", _chain(E.var(k)), E.const(9))))
    assert _CountedKey.hashes < 100 * _DEPTH


def test_text_of_a_shared_expression_is_cut_short():
    from exo_hl.core_ir.syms import Sym
    from exo_hl.effects import checks as CK
    from exo_hl.effects import eexpr as E
    n = Sym("n")
    e = _chain(E.var(n), depth=40)   # 3**40 leaves: never spelled out
    s = E.to_str(e, 200)
    assert len(s) == 203 and s.endswith("...")
    small = E.op("+", E.var(n), E.const(1))
    assert E.to_str(small, 200) == E.to_str(small) == "(n + 1)"
    r = CK.prove(E.eq(_chain(E.var(n), depth=8), E.const(7)))
    assert not r and len(r.reason) < 2 * CK.MESSAGE_LIMIT
    assert r.reason.startswith("(((")
