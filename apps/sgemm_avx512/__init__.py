"""SGEMM on AVX-512: a 6x64 register-blocked micro-kernel built by scheduling.

A package only so tests can import ``apps.sgemm_avx512.schedule`` without
clashing with other apps' modules; ``run.py`` also works as a plain script.
"""
