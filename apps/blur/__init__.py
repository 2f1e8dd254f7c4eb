"""Halide's two-stage 3x3 box blur on ui16, scheduled with exo_hl.stdlib."""
