"""Helpers the apps and benchmarks share; independent of exo_hl.

* ``blas_env``: run numpy's BLAS single-threaded and with its own kernel
  choice for this CPU (call before numpy is imported);
* ``peak``: measure the single-core FP32 FMA peak of an instruction set
  with a small generated C program;
* ``no_amx``: refuse this process (and its children) the Linux AMX
  permission with a seccomp filter: a machine without AMX, for benchmarks.
"""
