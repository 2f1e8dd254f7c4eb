"""The Gemmini hardware library (a user library: public API only), with a
plain-C functional model of the device so generated code runs on the host."""
from .lib import (CONFIGS, DIM, GEMM_ACCUM, GEMM_SCRATCH, INSTRS, MEMORIES,
                  ConfigLoad, ConfigLoadAcc, ConfigLoadId1, ConfigStore,
                  acc_scale, clamp_i8, config_count, config_ld, config_ld_acc,
                  config_ld_id1, config_st, instr_count, ld_acc_i32,
                  ld_acc_i32_bcast, ld_i8, ld_i8_id1, matmul_i8,
                  matmul_i8_sized, reset_instr_count, st_acc_i32, st_acc_i8,
                  st_acc_i8_relu, st_i8, zero_acc_i32)

__all__ = ["CONFIGS", "DIM", "GEMM_ACCUM", "GEMM_SCRATCH", "INSTRS",
           "MEMORIES", "ConfigLoad", "ConfigLoadAcc", "ConfigLoadId1",
           "ConfigStore", "acc_scale", "clamp_i8", "config_count",
           "config_ld", "config_ld_acc", "config_ld_id1", "config_st",
           "instr_count", "ld_acc_i32", "ld_acc_i32_bcast", "ld_i8",
           "ld_i8_id1", "matmul_i8", "matmul_i8_sized", "reset_instr_count",
           "st_acc_i32", "st_acc_i8", "st_acc_i8_relu", "st_i8",
           "zero_acc_i32"]
