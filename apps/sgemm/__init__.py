"""SGEMM on AVX2 (6x16) and AVX-512 (6x32): one schedule of checked
rewrites, parametrized by an instruction-set description.

A package only so tests can import ``apps.sgemm.schedule`` without
clashing with other apps' modules; ``run.py`` also works as a plain script.
"""
