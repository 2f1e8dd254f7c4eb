"""The RISC-V Vector (RVV 1.0) hardware library for f32 and ui16 (a user
library: public API only), with the vector length as config state
``VL.vl``.

Memory ``RVV``: ``vfloat32m1_t`` registers, 4 lanes used (or up to the
machine's VLMAX, ``VL.vlmax``), and ``vuint16m1_t`` ones, 8 lanes used
(or up to ``2 * VL.vlmax``; ``u16.py``); ``RVVM2``, ``RVVM4``,
``RVVM8``: f32 register groups (``groups.py``). ``INSTRS`` lists every
instruction; build with ``compile(target='riscv64')`` (docs/arm_riscv.md).
"""
from . import groups as _groups
from . import lib as _lib
from . import u16 as _u16
from .groups import RVVM2, RVVM4, RVVM8
from .groups import (rvv_vsetvl_e32m2,
                     rvv_vsetvl_min_e32m2,
                     rvv_vle32_f32m2,
                     rvv_vse32_f32m2,
                     rvv_vfmacc_vf_f32m2,
                     rvv_vmacc_unfused_vf_f32m2,
                     rvv_vsetvl_e32m4,
                     rvv_vsetvl_min_e32m4,
                     rvv_vle32_f32m4,
                     rvv_vse32_f32m4,
                     rvv_vfmacc_vf_f32m4,
                     rvv_vmacc_unfused_vf_f32m4,
                     rvv_vsetvl_e32m8,
                     rvv_vsetvl_min_e32m8,
                     rvv_vle32_f32m8,
                     rvv_vse32_f32m8,
                     rvv_vfmacc_vf_f32m8,
                     rvv_vmacc_unfused_vf_f32m8)
from .lib import (LANES, LANESU16, MAX_LANES, MAX_LANESU16, RVV, VL,
                  RVVRegisters,
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
from .u16 import (rvv_vsetvl_e16m1,
                  rvv_vsetvl_min_e16m1,
                  rvv_vle16_u16,
                  rvv_vse16_u16,
                  rvv_vadd_vv_u16,
                  rvv_mean3_u16,
                  rvv_mean3_wrap_u16)

__all__ = ["RVV", "RVVM2", "RVVM4", "RVVM8", "RVVRegisters", "VL", "INSTRS",
           "LANES", "MAX_LANES", "LANESU16", "MAX_LANESU16",
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
           "rvv_vfredosum_f32",
           "rvv_vsetvl_e32m2",
           "rvv_vsetvl_min_e32m2",
           "rvv_vle32_f32m2",
           "rvv_vse32_f32m2",
           "rvv_vfmacc_vf_f32m2",
           "rvv_vmacc_unfused_vf_f32m2",
           "rvv_vsetvl_e32m4",
           "rvv_vsetvl_min_e32m4",
           "rvv_vle32_f32m4",
           "rvv_vse32_f32m4",
           "rvv_vfmacc_vf_f32m4",
           "rvv_vmacc_unfused_vf_f32m4",
           "rvv_vsetvl_e32m8",
           "rvv_vsetvl_min_e32m8",
           "rvv_vle32_f32m8",
           "rvv_vse32_f32m8",
           "rvv_vfmacc_vf_f32m8",
           "rvv_vmacc_unfused_vf_f32m8",
           "rvv_vsetvl_e16m1",
           "rvv_vsetvl_min_e16m1",
           "rvv_vle16_u16",
           "rvv_vse16_u16",
           "rvv_vadd_vv_u16",
           "rvv_mean3_u16",
           "rvv_mean3_wrap_u16"]

#: every instruction: LMUL 1 (lib.py), the register groups, then ui16
INSTRS = _lib.INSTRS + _groups.INSTRS + _u16.INSTRS
