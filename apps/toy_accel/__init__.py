"""The paper's worked example (§3.2): GEMM on a toy 16x16 accelerator.

A package only so tests can import ``apps.toy_accel.gemm`` without clashing
with other apps' modules; ``run.py`` also works as a plain script.
"""
