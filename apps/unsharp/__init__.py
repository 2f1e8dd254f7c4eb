"""Unsharp mask as a four-stage pipeline, scheduled with exo_hl.stdlib."""
