"""Hardware-defined config fields (``@config(hardware_fields=...)``): a
compiled procedure may write one only by calling an instruction the config
names for it (RVV's ``VL.vlmax``: ``rvv_vsetvlmax_e32m1``). A hand write,
one in a called procedure, and a call of another instruction writing it
are refused at C generation; the replaced form compiles and runs under
qemu with the machine's value; ordinary config is unaffected;
``interpret()`` still runs the hand write (the algorithm's stand-in)."""
from __future__ import annotations

import pytest

from exo_hl import MemGenError, config, instr, size
from exo_hl.codegen_c.cross import CrossProgram
from exo_hl.core_ir.interpret import ConfigState
from exo_hl.frontend.decorators import parse_procs_source
from exo_hl.hw_libs import rvv
from tests.hw_libs.cross_tools import library_scope, need_target

pytestmark = pytest.mark.no_c_audit("RISC-V C: built by the cross "
                                    "compiler with -Werror in this test")

# the algorithm: the machine's VLMAX stood in for by the instruction's
# body (the checker then knows 4 <= VL.vlmax <= 2048), then a strip length
ALGO = """
def strip(avl: size):
    if VL.vlmax < 4:
        VL.vlmax = 4
    if VL.vlmax > 2048:
        VL.vlmax = 2048
    VL.vl = VL.vlmax
    rvv_vsetvl_min_e32m1(avl)
"""

HAND = """
def hand(avl: size):
    VL.vlmax = 64
    rvv_vsetvl_min_e32m1(avl)
"""

SUB = """
def set_vlmax():
    VL.vlmax = 64

def outer(avl: size):
    set_vlmax()
    rvv_vsetvl_min_e32m1(avl)
"""


def _procs(src, **extra):
    scope = library_scope(rvv)
    scope.update(extra)
    return parse_procs_source(src, scope)


def _replaced(p):
    return p.replace(p.find("VL.vlmax = _").parent().expand(0, 2),
                     rvv.rvv_vsetvlmax_e32m1)


def test_a_hand_write_is_refused_at_c_generation():
    (hand, ) = _procs(HAND)
    with pytest.raises(MemGenError) as e:
        hand.c_code_str()
    msg = str(e.value)
    assert "VL.vlmax = 64" in msg          # the statement
    assert "writes VL.vlmax by hand (VL.vlmax = 64)" in msg
    assert "hardware-defined" in msg
    assert "'rvv_vsetvlmax_e32m1'" in msg   # the instruction to use
    assert "hand" in msg                    # the procedure
    # the stand-in form of the algorithm is refused as well
    (algo, ) = _procs(ALGO)
    with pytest.raises(MemGenError, match="VL.vlmax by hand"):
        algo.c_code_str()


def test_a_write_by_any_route_is_refused():
    # nested in a loop and a branch, and one a scheduling call inserted
    (nested, ) = _procs("def nested(n: size):\n"
                        "    for i in seq(0, n):\n"
                        "        if i == 0:\n"
                        "            VL.vlmax = 8\n")
    (plain, ) = _procs("def plain(n: size):\n"
                       "    for i in seq(0, n):\n"
                       "        VL.vl = 4\n")
    inserted = plain.configwrite_at(plain.find_loop("i"), rvv.VL, "vlmax",
                                    "16", before=True)
    plain.c_code_str()                      # vl is not hardware-defined
    for p, stmt in ((nested, "VL.vlmax = 8"), (inserted, "VL.vlmax = 16")):
        with pytest.raises(MemGenError, match="VL.vlmax by hand") as e:
            p.c_code_str()
        assert stmt in str(e.value)


def test_interpret_still_runs_the_hand_write():
    (hand, ) = _procs(HAND)
    st = ConfigState()
    hand.interpret(avl=100, config_state=st)
    assert st[rvv.VL.vlmax] == 64 and st[rvv.VL.vl] == 64


def test_a_write_in_a_called_procedure_is_refused():
    set_vlmax, outer = _procs(SUB)
    with pytest.raises(MemGenError) as e:
        outer.c_code_str()
    assert "in procedure 'set_vlmax'" in str(e.value)
    assert "called from 'outer'" in str(e.value)
    assert "VL.vlmax = 64" in str(e.value)
    assert "'rvv_vsetvlmax_e32m1'" in str(e.value)


def test_another_instruction_writing_the_field_is_refused():
    @instr("{VL.vlmax} = 16;")
    def fake_vlmax():
        rvv.VL.vlmax = 16

    (p, ) = _procs("def p():\n    fake_vlmax()\n", fake_vlmax=fake_vlmax)
    with pytest.raises(MemGenError) as e:
        p.c_code_str()
    assert "calls instruction 'fake_vlmax' (fake_vlmax()), whose body " \
        "writes VL.vlmax" in str(e.value)
    assert "'rvv_vsetvlmax_e32m1'" in str(e.value)


def test_ordinary_config_and_fields_are_unaffected():
    @config
    class Plain:
        k: size

    (p, ) = _procs("def p():\n    Plain.k = 64\n    VL.vl = 4\n",
                   Plain=Plain)
    src = p.c_code_str()
    assert "ctxt->Plain_k = 64;" in src and "ctxt->VL_vl = 4;" in src
    assert Plain.hardware_fields == {} and Plain.hardware_writers("k") is None
    assert rvv.VL.hardware_writers("vl") is None
    assert rvv.VL.hardware_fields == {"vlmax": ("rvv_vsetvlmax_e32m1", )}


def test_the_declaration_is_checked():
    with pytest.raises(TypeError, match="has no field 'vlmx'"):
        @config(hardware_fields={"vlmx": "some_instr"})
        class Bad:
            vlmax: size
    for spec in (["vlmax"], {"vlmax": ()}, {"vlmax": 3}):
        with pytest.raises(TypeError, match="hardware_fields"):
            config(hardware_fields=spec)
    many = config(hardware_fields={"m": ("a", "b")})

    class Two:
        m: size
    assert many(Two).hardware_writers("m") == ("a", "b")


def test_the_replaced_form_compiles_and_runs_under_qemu():
    (algo, ) = _procs(ALGO)
    p = _replaced(algo)
    assert "VL.vlmax =" not in str(p)
    need_target("riscv64-vlen256")
    prog = CrossProgram([p], "riscv64-vlen256", cflags="-std=c11 -Werror",
                        stem="hardware_fields")
    for avl in (3, 100):
        st = ConfigState()
        st[rvv.VL.vlmax] = 8                # VLEN 256
        p.interpret(avl=avl, config_state=st)
        prog.run_many([(p, dict(avl=avl))])
        assert prog.get_config(rvv.VL, "vlmax") == 8    # the machine's
        assert prog.get_config(rvv.VL, "vl") == st[rvv.VL.vl] == min(avl, 8)
