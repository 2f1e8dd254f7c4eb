"""The floating-point mode the generated C needs, and the compiler options
that would change it (docs/semantics.md, "Compiler options").

``interpret()`` computes IEEE arithmetic, each operation rounded to its
type, and the C computes the same bits only when its compiler does too.
Some options change what C arithmetic means, not just how fast it runs:

- ``-ffast-math`` / ``-Ofast`` and their parts (``-ffinite-math-only``,
  ``-fassociative-math``, ``-freciprocal-math``, ``-fno-signed-zeros``,
  ``-funsafe-math-optimizations``; clang's ``-ffp-model=fast``) reorder
  and drop operations (``fmin`` of a NaN gave the NaN's partner where
  ``interpret()`` gives it, ``(a + b) - b`` became ``a``); GCC 12 also
  links ``crtfastmath.o`` into a ``-shared`` library built with them,
  which sets flush-to-zero in the *whole process* as the library loads,
  so ``interpret()`` and numpy flushed denormals afterwards.
- ``-fsingle-precision-constant`` (GCC) makes every unsuffixed constant
  a ``float``: the ``f64`` literal ``1e300`` became infinity.
- ``-mfpmath=387`` or ``-m32`` (x87: ``FLT_EVAL_METHOD`` 2) computes
  ``float`` operations in long double and rounds once at the end.

Each of these is visible to the preprocessor or to the compiler, so every
generated ``.c`` file refuses to build under them (``FP_MODE_CHECKS``):
``compile()`` raises ``CompileError`` with the reason, and a user's own
build of the file stops with it. A build that wants the fast-math code
anyway defines ``EXO_HL_ALLOW_FAST_MATH`` (``interpret()`` is then no
longer what it computes).

Clang 14 defines no macro for several of them (``-fno-signed-zeros``,
``-fassociative-math``, ``-freciprocal-math``, ``-fno-honor-nans``,
``-funsafe-math-optimizations``), so ``compile()`` also reads its flags
(``meaning_changing``) and refuses those options by name.

One option is invisible even so: clang's ``-ffp-contract=fast`` fuses ``a*b + c``
into one rounding *disregarding* the file's ``#pragma STDC FP_CONTRACT
OFF`` (clang 14; GCC honours its own pragma). ``compile()`` therefore puts
``-ffp-contract=off`` after every user flag (``CONTRACT_OFF``: the last
such flag wins, and it only restates what the file's pragmas say); a
build of the C outside ``compile()`` must not pass it (docs/using_c.md).
"""
from __future__ import annotations

#: emitted after the contraction pragmas in every generated source file
FP_MODE_CHECKS = """\
/* The values are IEEE arithmetic, each operation rounded to its type, as
   exo_hl's interpret() computes them: options that change that are refused
   (docs/semantics.md, "Compiler options"). */
#if !defined(EXO_HL_ALLOW_FAST_MATH) && (defined(__FAST_MATH__) || \\
    (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__) || \\
    defined(__ASSOCIATIVE_MATH__) || defined(__RECIPROCAL_MATH__) || \\
    defined(__NO_SIGNED_ZEROS__))
#error "exo_hl: generated code must not be built with -ffast-math, -Ofast or their parts (they change its results; define EXO_HL_ALLOW_FAST_MATH to build it anyway)"
#endif
#if defined(__FLT_EVAL_METHOD__) && __FLT_EVAL_METHOD__ != 0 && \\
    __FLT_EVAL_METHOD__ != 16
#error "exo_hl: generated code needs each float operation rounded to its type (FLT_EVAL_METHOD 0): not x87 arithmetic (-mfpmath=387, -m32 without -mfpmath=sse)"
#endif
_Static_assert(sizeof(1.0) == sizeof(double), "exo_hl: unsuffixed floating "
               "constants must be double (no -fsingle-precision-constant)");
"""

#: ``compile()``'s last flag: clang's -ffp-contract=fast ignores the file's
#: pragma (module docstring)
CONTRACT_OFF = "-ffp-contract=off"


#: options that change what C arithmetic means -> the options that undo
#: them when they come later (``-fno-fast-math`` undoes every part)
_CHANGING = {
    "-ffast-math": ("-fno-fast-math", ),
    "-ffinite-math-only": ("-fno-finite-math-only", "-fno-fast-math"),
    "-fno-honor-nans": ("-fhonor-nans", "-fno-fast-math"),
    "-fno-honor-infinities": ("-fhonor-infinities", "-fno-fast-math"),
    "-funsafe-math-optimizations": ("-fno-unsafe-math-optimizations",
                                    "-fno-fast-math"),
    "-fassociative-math": ("-fno-associative-math", "-fno-fast-math"),
    "-freciprocal-math": ("-fno-reciprocal-math", "-fno-fast-math"),
    "-fno-signed-zeros": ("-fsigned-zeros", "-fno-fast-math"),
    "-fapprox-func": ("-fno-approx-func", "-fno-fast-math"),
    "-fsingle-precision-constant": ("-fno-single-precision-constant", ),
    "-mfpmath=387": ("-mfpmath=sse", ),
    "-ffp-model=fast": ("-ffp-model=precise", "-ffp-model=strict"),
    "-ffp-model=aggressive": ("-ffp-model=precise", "-ffp-model=strict"),
    # flush denormals (GCC 13 sets the process's mode, as crtfastmath)
    "-mdaz-ftz": ("-mno-daz-ftz", ),
    "-fdenormal-fp-math=preserve-sign": ("-fdenormal-fp-math=ieee", ),
    "-fdenormal-fp-math=positive-zero": ("-fdenormal-fp-math=ieee", ),
    "-Ofast": ("-O", "-O0", "-O1", "-O2", "-O3", "-Os", "-Oz", "-Og"),
}


def meaning_changing(flags) -> str | None:
    """The first option of ``flags`` (a list, in command-line order) that
    changes what C arithmetic means and is not undone by a later one, else
    None (the build may go ahead)."""
    on = []
    for f in flags:
        if f in _CHANGING and f not in on:
            on.append(f)
        on = [o for o in on if f not in _CHANGING[o]]
    return on[0] if on else None
