"""The RISC-V Vector (RVV 1.0) hardware library for f32 (a user library:
public API only), with the vector length as config state ``VL.vl``.

Memory ``RVV``: ``vfloat32m1_t`` registers, 4 lanes used (or up to the
machine's VLMAX, ``VL.vlmax``). ``INSTRS`` lists
every instruction; build with ``compile(target='riscv64')``
(docs/arm_riscv.md).
"""
from .lib import (INSTRS, LANES, MAX_LANES, RVV, VL,
                  rvv_vsetvl_e32m1,
                  rvv_vsetvlmax_e32m1,
                  rvv_vsetvl_min_e32m1,
                  rvv_vle32_f32,
                  rvv_vse32_f32,
                  rvv_vfmv_v_f_f32,
                  rvv_vfmv_v_f_scalar_f32,
                  rvv_vzero_f32,
                  rvv_vfadd_vv_f32,
                  rvv_vfmul_vv_f32,
                  rvv_vfmacc_vv_f32,
                  rvv_vfmacc_vf_f32,
                  rvv_vmacc_unfused_vf_f32,
                  rvv_vfredosum_f32)

__all__ = ["RVV", "VL", "INSTRS", "LANES", "MAX_LANES",
           "rvv_vsetvl_e32m1",
           "rvv_vsetvlmax_e32m1",
           "rvv_vsetvl_min_e32m1",
           "rvv_vle32_f32",
           "rvv_vse32_f32",
           "rvv_vfmv_v_f_f32",
           "rvv_vfmv_v_f_scalar_f32",
           "rvv_vzero_f32",
           "rvv_vfadd_vv_f32",
           "rvv_vfmul_vv_f32",
           "rvv_vfmacc_vv_f32",
           "rvv_vfmacc_vf_f32",
           "rvv_vmacc_unfused_vf_f32",
           "rvv_vfredosum_f32"]
