"""docs/arm_riscv.md: linked, and its table covers every instruction kind
of Exo 1.0's NEON and RVV libraries and every instruction of ours."""
from __future__ import annotations

import re
from pathlib import Path

from exo_hl.hw_libs import neon, rvv

DOCS = Path(__file__).resolve().parent.parent / "docs"

#: every @instr of Exo 1.0.0's exo/platforms/neon.py and rvv.py
EXO_NEON = """neon_assoc_reduce_add_instr_4xf32 neon_vld_4xf32 neon_vst_4xf32
neon_broadcast_4xf32 neon_broadcast_4xf32_scalar neon_zero_4xf32
neon_vadd_4xf32 neon_reduce_vadd_4xf32 neon_vmul_4xf32 neon_vmul2_4xf32
neon_vfmla_4xf32_4xf32 neon_vfmla2_4xf32_4xf32 neon_vfmadd_4xf32_4xf32
neon_vfmadd_ex_4xf32_4xf32 neon_vfmadd_4xf32_1xf32 neon_vfmadd_1xf32_4xf32
neon_vld_8xf16 neon_vst_8xf16 neon_broadcast_8xf16 neon_zero_8xf16
neon_vadd_8xf16 neon_vmul_8xf16 neon_vfmla_8xf16_8xf16
neon_vfmadd_8xf16_8xf16 neon_vfmadd_ex_8xf16_8xf16 neon_vfmadd_8xf16_1xf16
neon_vfmadd_1xf16_8xf16 neon_reg_copy_4xf32 neon_vneg_4xf32 neon_vld_2xf64
neon_vst_2xf64 neon_broadcast_2xf64 neon_broadcast_2xf64_scalar
neon_vfmadd_2xf64_2xf64 neon_zero_2xf64 neon_assoc_reduce_add_instr_2xf64
neon_vmul_2xf64 neon_vadd_2xf64 neon_reduce_vadd_2xf64 neon_reg_copy_2xf64
neon_vneg_2xf64 neon_convert_f32_lower_to_f64
neon_convert_f32_upper_to_f64""".split()
EXO_RVV = """rvv_vld_4xf32 rvv_vst_4xf32 rvv_broadcast_4xf32
rvv_broadcast_4xf32_scalar rvv_broadcast_4xf32_0 rvv_vfmacc_4xf32_4xf32
rvv_vfmacc_4xf32_1xf32 rvv_vfmacc_1xf32_4xf32""".split()


def _table_rows(text):
    return [ln for ln in text.splitlines() if ln.startswith("| `")
            or ln.startswith("| -")]


def test_every_exo_instruction_has_a_row_with_a_status():
    assert len(EXO_NEON) == 43 and len(EXO_RVV) == 8
    rows = _table_rows((DOCS / "arm_riscv.md").read_text())
    for name in EXO_NEON + EXO_RVV:
        row = [r for r in rows if re.search(rf"`{name}`", r.split("|")[1])]
        assert row, name
        status = row[0].rstrip(" |").split("|")[-1].strip()
        assert status, name


def test_every_instruction_of_ours_is_on_the_page():
    text = (DOCS / "arm_riscv.md").read_text()
    for p in neon.INSTRS + rvv.INSTRS:
        assert f"`{p.name()}`" in text or p.name() in text, p.name()


def test_pages_are_linked_and_generated():
    index = (DOCS / "index.md").read_text()
    for page in ("arm_riscv", "hw_neon", "hw_rvv"):
        assert f"{page}\n" in index
    for lib in ("neon", "rvv"):
        page = (DOCS / f"hw_{lib}.md").read_text()
        assert f"{{instr-reference}} exo_hl.hw_libs.{lib}" in page
    assert "(arm_riscv.md)" in (DOCS / "hardware.md").read_text()
