"""apps/toy_accel: the paper's worked example (§3.2) end to end.

The schedule maps a GEMM onto a toy accelerator library (custom memories,
config state, instructions) with checked rewrites only; the config write ends
up once at the top; the C uses the instruction templates and equals numpy.
The rejections below are the safety checks the example relies on.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.toy_accel import gemm as G  # noqa: E402
from apps.toy_accel import hw_lib as H  # noqa: E402
from apps.toy_accel.hw_lib import (ACCUM, SCRATCH, ConfigLoad,  # noqa: E402
                                   config_ld, ld_data, split_config)
from exo_hl import (DRAM, MemGenError, SchedulingError, f32,  # noqa: E402
                    proc, seq, size, stride)
from exo_hl.core_ir.nodes import IR  # noqa: E402
from exo_hl.core_ir.traversal import walk  # noqa: E402


@pytest.fixture(scope="module")
def stages():
    return dict(G.stages())


@pytest.fixture(scope="module")
def sched():
    return G.schedule()


def _body(p):
    """Statement lines of the printed body, continuation lines joined."""
    lines = str(p).splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("def "))
    # the signature may wrap: the body starts after the line ending in ':'
    while not lines[start].rstrip().endswith("):"):
        start += 1
    out = []
    depth = 0
    for ln in lines[start + 1:]:
        if depth > 0:
            out[-1] += " " + ln.strip()
        else:
            out.append(ln)
        depth += ln.count("(") + ln.count("[") - ln.count(")") - ln.count("]")
    return out


CONFIG_WRITE = re.compile(r"\bconfig_ld\(|ConfigLoad\.src_stride\s*=[^=]")


# ---------------------------------------------------------------------------
# the printed schedule

def test_exactly_one_config_write_at_the_top(sched):
    body = _body(sched)
    stmts = [ln for ln in body if not ln.strip().startswith("assert ")]
    assert [ln.strip() for ln in body[:3]] == [
        "assert M % 16 == 0", "assert N % 16 == 0", "assert K % 16 == 0"]
    writes = [ln for ln in body if CONFIG_WRITE.search(ln)]
    assert len(writes) == 1, writes
    # first statement after the asserts, at body level (not in a loop)
    assert stmts[0] == "    config_ld(stride(A, 0))"
    # the loop nest follows it
    assert stmts[1].startswith("    for io in seq(0, M / 16):")


def test_every_loop_nest_is_an_instruction(sched):
    body = "\n".join(_body(sched))
    for call in ("zero_acc(16, 16, res[0:16, 0:16])",
                 "ld_data(16, 16, A[16 * io:16 * io + 16, "
                 "16 * ko:16 * ko + 16], a[0:16, 0:16])",
                 "ld_data_str(16, 16, B[16 * ko:16 * ko + 16, "
                 "16 * jo:16 * jo + 16], b[0:16, 0:16])",
                 "matmul(a[0:16, 0:16], b[0:16, 0:16], res[0:16, 0:16])",
                 "st_acc_add(16, 16, res[0:16, 0:16], C[16 * io:16 * io + 16,"
                 " 16 * jo:16 * jo + 16])"):
        assert call in body
    loops = re.findall(r"for (\w+) in seq", body)
    assert loops == ["io", "jo", "ko"]          # only the tile loops remain
    assert "res: f32[16, 16] @ ACCUM" in body
    assert "a: f32[16, 16] @ SCRATCH" in body
    assert "b: f32[16, 16] @ SCRATCH" in body


def test_no_direct_access_to_accelerator_memories(sched):
    ir = sched.ir()
    accel = {s.name for s in walk(ir) if isinstance(s, IR.Alloc)
             and s.mem in (SCRATCH, ACCUM)}
    assert {n.name for n in accel} == {"res", "a", "b"}
    # in the IR: no element read/write/reduce, only windows passed to calls
    for n in walk(ir):
        if isinstance(n, (IR.Assign, IR.Reduce, IR.Read)):
            assert n.name not in accel, n
    # in the text: every mention of those buffers is a full-tile window
    text = "\n".join(_body(sched))
    for m in re.finditer(r"\b(res|a|b)\[([^\]]*)\]", text):
        assert m.group(2) == "0:16, 0:16", m.group(0)


# ---------------------------------------------------------------------------
# the generated C

def _kernel_c(p):
    text = p.c_code_str()
    return text[text.rindex(f"void {p.name()}("):]


def test_c_uses_instruction_templates(sched):
    c = _kernel_c(sched)
    assert c.count("toy_config_ld(") == 1
    assert c.index("toy_config_ld(&ctxt->ConfigLoad_src_stride, K);") < \
        c.index("for (")
    for fn in ("toy_zero_acc(", "toy_mvin(", "toy_mvin_str(", "toy_matmul(",
               "toy_mvout("):
        assert c.count(fn) == 1, fn
    # the on-chip buffers are plain C arrays touched only through templates
    assert "float res[256];" in c and "float a[256];" in c
    uses = re.findall(r"(float |&)?\b(?:res|a|b)\[([^\]]*)\]", c)
    assert uses and all(pre == "&" and i == "0" or
                        pre == "float " and i == "256" for pre, i in uses)


def test_direct_access_to_accelerator_memory_is_a_codegen_error(stages):
    staged = stages["stage tiles into the accelerator memories"]
    with pytest.raises(MemGenError, match="not readable from C"):
        staged.c_code_str()


@pytest.mark.parametrize("M,N,K", [(32, 48, 64), (16, 16, 16), (48, 16, 32)])
def test_compiled_equals_numpy(sched, M, N, K):
    rng = np.random.default_rng(M * 10000 + N * 100 + K)
    A = rng.integers(-4, 5, (M, K)).astype(np.float32)
    B = rng.integers(-4, 5, (K, N)).astype(np.float32)
    C = rng.integers(-4, 5, (M, N)).astype(np.float32)
    want = C + A @ B
    got = C.copy()
    sched.compile()(M=M, N=N, K=K, A=A, B=B, C=got)
    np.testing.assert_array_equal(got, want)
    if (M, N, K) == (32, 48, 64):
        got = C.copy()
        sched.interpret(M=M, N=N, K=K, A=A, B=B, C=got)
        np.testing.assert_array_equal(got, want)


def test_kernel_is_gemm_only_modulo_the_stride_register(sched, stages):
    # the kernel leaves ConfigLoad.src_stride == K behind; gemm does not
    # touch it, so full equivalence must not be claimed
    assert not sched.is_eq(G.gemm)
    staged = stages["stage tiles into the accelerator memories"]
    assert staged.is_eq(G.gemm)             # split/reorder/stage/set_memory
    assert not sched.is_eq(staged)


def test_every_stage_still_computes_gemm(stages):
    """Each intermediate procedure (interpreted) is still the GEMM."""
    M, N, K = 16, 32, 32
    rng = np.random.default_rng(7)
    A = rng.integers(-4, 5, (M, K)).astype(np.float32)
    B = rng.integers(-4, 5, (K, N)).astype(np.float32)
    C = rng.integers(-4, 5, (M, N)).astype(np.float32)
    for what, p in stages.items():
        got = C.copy()
        p.interpret(M=M, N=N, K=K, A=A, B=B, C=got)
        np.testing.assert_array_equal(got, C + A @ B, err_msg=what)


# ---------------------------------------------------------------------------
# the library side (§3.2.4)

def test_library_split_of_the_self_configuring_load():
    q = split_config()
    body = [ln.strip() for ln in _body(q)]
    assert body == ["assert n <= 16 and m <= 16",
                    "config_ld(stride(src, 0))",
                    "ld_data(n, m, src[0:n, 0:m], dst[0:n, 0:16])"]
    # derived from the self-configuring load, through a config write
    ops = [op for op, _ in q.derivation()]
    assert ops[1:] == ["configwrite_at", "replace", "replace"]


def test_instructions_touch_only_their_memories():
    mems = {a.name.name: a.mem for a in H.matmul.ir().args}
    assert mems == {"a": SCRATCH, "b": SCRATCH, "c": ACCUM}
    assert not SCRATCH.can_read() and not ACCUM.can_read()
    with pytest.raises(MemGenError, match="16 wide"):
        SCRATCH.alloc("t", "float", ["16", "8"], "here")


# ---------------------------------------------------------------------------
# the safety checks the example relies on

def test_configured_load_needs_the_config_write(stages):
    p = stages["zero / store / matmul / B-load instructions"]
    with pytest.raises(SchedulingError,
                       match=r"precondition 'ConfigLoad.src_stride == "
                             r"stride\(src, 0\)'"):
        p.replace(p.find_loop('i2'), ld_data)
    # a config write with the wrong stride does not help either
    q = p.configwrite_at('a : _', ConfigLoad, 'src_stride', 'stride(B, 0)',
                         before=True)
    with pytest.raises(SchedulingError, match="cannot prove precondition"):
        q.replace(q.find_loop('i2'), ld_data)


def test_config_write_cannot_move_past_the_load_that_reads_it(stages):
    p = stages["configure, then load A with ld_data"]
    p = p.reorder_stmts('a : _', 'config_ld(_)')     # fine: an allocation
    p = p.reorder_stmts('config_ld(_)', 'a : _')     # and back
    with pytest.raises(SchedulingError, match="do not commute"):
        p.reorder_stmts('config_ld(_)', 'ld_data(_)')


@proc
def _two_loads(A: f32[16, 32] @ DRAM, B: f32[16, 48] @ DRAM,
               a: f32[16, 16] @ SCRATCH, b: f32[16, 16] @ SCRATCH):
    config_ld(stride(B, 0))
    H.ld_data_cfg(16, 16, A[0:16, 0:16], a[0:16, 0:16])
    ld_data(16, 16, B[0:16, 0:16], b[0:16, 0:16])


def test_split_load_rejected_where_its_config_write_would_be_observed():
    # the split form clobbers the stride register that the B load reads
    with pytest.raises(SchedulingError, match="modulo ConfigLoad.src_stride"):
        _two_loads.call_eqv('ld_data_cfg(_)', split_config())


@proc
def _maybe_zero_trips(K: size, A: f32[16, K] @ DRAM):
    for ko in seq(0, K / 16):
        config_ld(stride(A, 0))


def test_config_loop_removal_needs_an_iteration():
    with pytest.raises(SchedulingError, match="may run zero times"):
        _maybe_zero_trips.remove_loop('ko')


# ---------------------------------------------------------------------------
# the app's script

def test_run_script():
    r = subprocess.run([sys.executable, str(REPO / "apps" / "toy_accel" /
                                            "run.py"), "--sizes", "32,48,64"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert ("M=32, N=48, K=64: interpret: equal to numpy; compiled C: "
            "equal to numpy") in r.stdout
    assert "toy_config_ld(&ctxt->ConfigLoad_src_stride, K);" in r.stdout


# ---------------------------------------------------------------------------
# one copy of the config (issue 33 item 13): the simulator's stride register
# is the ConfigLoad.src_stride field, so plain writes configure the engine

@proc
def toy_plain_config(A: f32[20, 24] @ DRAM, I: f32[16, 16] @ DRAM,
                     B: f32[20, 24] @ DRAM):
    t: f32[16, 16] @ SCRATCH
    e: f32[16, 16] @ SCRATCH
    acc: f32[16, 16] @ ACCUM
    ConfigLoad.src_stride = stride(A, 0)
    ld_data(16, 16, A[2:18, 3:19], t)
    H.ld_data_str(16, 16, I, e)
    H.zero_acc(16, 16, acc)
    H.matmul(t, e, acc)
    H.st_acc(16, 16, acc, B[4:20, 8:24])
    config_ld(5)
    if ConfigLoad.src_stride == 5:
        B[0, 0] = 1.0


def test_plain_config_write_configures_the_simulated_engine():
    A = np.random.default_rng(0).integers(-9, 9, (20, 24)).astype(np.float32)
    I = np.eye(16, dtype=np.float32)
    want = np.zeros((20, 24), np.float32)
    want[4:20, 8:24] = A[2:18, 3:19]
    want[0, 0] = 1.0
    for run in (toy_plain_config.interpret, toy_plain_config.compile()):
        B = np.zeros((20, 24), np.float32)
        run(A=A, I=I, B=B)
        assert np.array_equal(B, want)
