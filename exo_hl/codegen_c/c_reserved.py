"""Identifiers a generated C file may not give to user names.

One set, used for every name the backend prints: public procedures (whose
C names are the ABI, so a reserved one is refused) and everything else
(arguments, locals, static helpers, config fields: renamed away from it).
It holds

- C11 keywords, the next standard's, and C++'s (the header is C++-clean);
- every identifier the backend itself generates: the ``exo_``/``EXO_``
  prefixes (helpers, macros, window structs and their guards, the
  sanitized-run driver), ``ctxt``, ``main`` and, per file, the context type
  ``<basename>_Context`` and the include guard (``program_names``);
- the macros and file-scope names of every header generated C includes
  (``HEADER_NAMES``), and every name beginning with an underscore (C11
  7.1.3 reserves them at file scope; the intrinsics live there).

``HEADER_NAMES`` is data, computed once with ``cc -dM -E`` and clang's AST
dump over gcc and clang, in strict and GNU modes, with ``-march=native``
(rerun ``python -m exo_hl.codegen_c.c_reserved`` to refresh it). A stored
list, rather than asking the compiler at build time, keeps the generated
text the same on every machine and lets ``c_code_str`` run without a C
compiler; the name patterns below (the C standard's reservations for
present and future library macros) cover what another C library adds.
"""
from __future__ import annotations

import re

#: C11, C23 and C++ keywords (the header is also included from C++)
KEYWORDS = frozenset("""
auto break case char const continue default do double else enum extern float
for goto if inline int long register restrict return short signed sizeof static
struct switch typedef union unsigned void volatile while _Bool _Complex
_Imaginary _Alignas _Alignof _Atomic _Generic _Noreturn _Static_assert
_Thread_local alignas alignof bool constexpr false nullptr static_assert
thread_local true typeof typeof_unqual asm class new delete this template
namespace operator private public protected virtual friend try catch throw
mutable explicit export typename using wchar_t char8_t char16_t char32_t
concept requires co_await co_return co_yield decltype noexcept reinterpret_cast
static_cast const_cast dynamic_cast typeid and and_eq bitand bitor compl not
not_eq or or_eq xor xor_eq
""".split())

#: names the backend's own C uses outside the exo_/EXO_ prefixes (the
#: OpenMP functions that par loops call)
BACKEND_NAMES = frozenset({"ctxt", "main", "argc", "argv", "NULL",
                           "omp_get_max_threads", "omp_get_num_threads",
                           "omp_get_thread_num"})

#: the standard's reserved patterns: underscores (7.1.3), errno macros,
#: <stdint.h>/<inttypes.h> limits, types and format macros, <signal.h>,
#: <locale.h>, <fenv.h> and <math.h> classification macros (7.31); the
#: limits of <limits.h>, <float.h> and <wchar.h>, the names of
#: <stdatomic.h> and <threads.h>, which a program may include before the
#: generated header; and the OpenMP runtimes' entry points (a function
#: named GOMP_parallel would replace libgomp's)
_PATTERN = re.compile(
    r"_|exo_|EXO_|E[0-9A-Z]|U?INT\w*_(MAX|MIN|C)$|u?int\w*_t$|"
    r"(PRI|SCN)[a-zX]|SIG_?[A-Z]|LC_[A-Z]|FE_[A-Z]|FP_[A-Z]|ATOMIC_[A-Z]|"
    r"TIME_[A-Z]|(U|S)?CHAR_(MAX|MIN|BIT)$|U?SHRT_(MAX|MIN)$|"
    r"U?L?LONG_(MAX|MIN)$|(FLT|DBL|LDBL)_[A-Z0-9]|W(CHAR|INT)_(MAX|MIN)$|"
    r"atomic_|memory_order_|(thrd|mtx|cnd|tss)_|GOMP_|omp_|kmp_")

#: object-like macros of other standard headers a program may include
#: before the generated one (<errno.h>, <complex.h>, <time.h>, <wchar.h>,
#: <limits.h>, <stdnoreturn.h>, <threads.h>)
OTHER_HEADER_NAMES = frozenset("""
errno I complex imaginary noreturn MB_LEN_MAX CLOCKS_PER_SEC WEOF
DECIMAL_DIG ONCE_FLAG_INIT TSS_DTOR_ITERATIONS PATH_MAX NAME_MAX
jmp_buf sig_atomic_t once_flag
""".split())

#: file-scope names and macros of the headers generated C includes
HEADER_NAMES = frozenset("""
BIG_ENDIAN BUFSIZ BYTE_ORDER EOF EXIT_FAILURE EXIT_SUCCESS FD_CLR FD_ISSET
FD_SET FD_SETSIZE FD_ZERO FILE FILENAME_MAX FOPEN_MAX FP_FAST_FMA FP_FAST_FMAF
FP_ILOGB0 FP_ILOGBNAN FP_INFINITE FP_NAN FP_NORMAL FP_SUBNORMAL FP_ZERO
HUGE_VAL HUGE_VALF HUGE_VALL INFINITY INT16_C INT16_MAX INT16_MIN INT32_C
INT32_MAX INT32_MIN INT64_C INT64_MAX INT64_MIN INT8_C INT8_MAX INT8_MIN
INTMAX_C INTMAX_MAX INTMAX_MIN INTPTR_MAX INTPTR_MIN INT_FAST16_MAX
INT_FAST16_MIN INT_FAST32_MAX INT_FAST32_MIN INT_FAST64_MAX INT_FAST64_MIN
INT_FAST8_MAX INT_FAST8_MIN INT_LEAST16_MAX INT_LEAST16_MIN INT_LEAST32_MAX
INT_LEAST32_MIN INT_LEAST64_MAX INT_LEAST64_MIN INT_LEAST8_MAX INT_LEAST8_MIN
LITTLE_ENDIAN L_ctermid L_tmpnam MATH_ERREXCEPT MATH_ERRNO MB_CUR_MAX M_1_PI
M_2_PI M_2_SQRTPI M_E M_LN10 M_LN2 M_LOG10E M_LOG2E M_PI M_PI_2 M_PI_4
M_SQRT1_2 M_SQRT2 NAN NFDBITS NULL PDP_ENDIAN PTRDIFF_MAX PTRDIFF_MIN P_tmpdir
RAND_MAX SEEK_CUR SEEK_END SEEK_SET SIG_ATOMIC_MAX SIG_ATOMIC_MIN SIZE_MAX
TMP_MAX UINT16_C UINT16_MAX UINT32_C UINT32_MAX UINT64_C UINT64_MAX UINT8_C
UINT8_MAX UINTMAX_C UINTMAX_MAX UINTPTR_MAX UINT_FAST16_MAX UINT_FAST32_MAX
UINT_FAST64_MAX UINT_FAST8_MAX UINT_LEAST16_MAX UINT_LEAST32_MAX
UINT_LEAST64_MAX UINT_LEAST8_MAX WCHAR_MAX WCHAR_MIN WCONTINUED WEXITED
WEXITSTATUS WIFCONTINUED WIFEXITED WIFSIGNALED WIFSTOPPED WINT_MAX WINT_MIN
WNOHANG WNOWAIT WSTOPPED WSTOPSIG WTERMSIG WUNTRACED a64l abort abs acos acosf
acosh acoshf acoshl acosl aligned_alloc alloca arc4random arc4random_buf
arc4random_uniform asin asinf asinh asinhf asinhl asinl at_quick_exit atan
atan2 atan2f atan2l atanf atanh atanhf atanhl atanl atexit atof atoi atol
atoll bcmp bcopy be16toh be32toh be64toh blkcnt_t blksize_t bool bsearch bzero
caddr_t calloc cbrt cbrtf cbrtl ceil ceilf ceill clearenv clearerr
clearerr_unlocked clock_t clockid_t copysign copysignf copysignl cos cosf cosh
coshf coshl cosl ctermid daddr_t definition dev_t div div_t double_t dprintf
drand48 drand48_data drand48_r drem dremf dreml ecvt ecvt_r erand48 erand48_r
erf erfc erfcf erfcl erff erfl exit exp exp2 exp2f exp2l expf expl
explicit_bzero expm1 expm1f expm1l fabs fabsf fabsl false fclose fcvt fcvt_r
fd_mask fd_set fdim fdimf fdiml fdopen feof feof_unlocked ferror
ferror_unlocked fflush fflush_unlocked ffs ffsl ffsll fgetc fgetc_unlocked
fgetpos fgets fileno fileno_unlocked finite finitef finitel float_t flockfile
floor floorf floorl fma fmaf fmal fmax fmaxf fmaxl fmemopen fmin fminf fminl
fmod fmodf fmodl fopen fpclassify fpos_t fprintf fputc fputc_unlocked fputs
fread fread_unlocked free freopen frexp frexpf frexpl fsblkcnt_t fscanf fseek
fseeko fsetpos fsfilcnt_t fsid_t ftell ftello ftrylockfile funlockfile fwrite
fwrite_unlocked gamma gammaf gammal gcvt getc getc_unlocked getchar
getchar_unlocked getdelim getenv getline getloadavg getsubopt getw gid_t
htobe16 htobe32 htobe64 htole16 htole32 htole64 hypot hypotf hypotl id_t ilogb
ilogbf ilogbl index initstate initstate_r ino_t int16_t int32_t int64_t int8_t
int_fast16_t int_fast32_t int_fast64_t int_fast8_t int_least16_t int_least32_t
int_least64_t int_least8_t intmax_t intptr_t isfinite isgreater isgreaterequal
isinf isinff isinfl isless islessequal islessgreater isnan isnanf isnanl
isnormal isunordered j0 j0f j0l j1 j1f j1l jn jnf jnl jrand48 jrand48_r key_t
l64a labs lcong48 lcong48_r ldexp ldexpf ldexpl ldiv ldiv_t le16toh le32toh
le64toh lgamma lgamma_r lgammaf lgammaf_r lgammal lgammal_r linux llabs lldiv
lldiv_t llrint llrintf llrintl llround llroundf llroundl locale_t loff_t log
log10 log10f log10l log1p log1pf log1pl log2 log2f log2l logb logbf logbl logf
logl lrand48 lrand48_r lrint lrintf lrintl lround lroundf lroundl malloc
math_errhandling max_align_t mblen mbstowcs mbtowc memccpy memchr memcmp
memcpy memmove memset mkdtemp mkstemp mkstemps mktemp mode_t modf modff modfl
mrand48 mrand48_r nan nanf nanl nearbyint nearbyintf nearbyintl nextafter
nextafterf nextafterl nexttoward nexttowardf nexttowardl nlink_t nrand48
nrand48_r off_t offsetof on_exit open_memstream pclose perror pid_t popen
posix_memalign pow powf powl printf pselect pthread_attr_t pthread_barrier_t
pthread_barrierattr_t pthread_cond_t pthread_condattr_t pthread_key_t
pthread_mutex_t pthread_mutexattr_t pthread_once_t pthread_rwlock_t
pthread_rwlockattr_t pthread_spinlock_t pthread_t ptrdiff_t putc putc_unlocked
putchar putchar_unlocked putenv puts putw qecvt qecvt_r qfcvt qfcvt_r qgcvt
qsort quad_t quick_exit rand rand_r random random_data random_r realloc
reallocarray realpath register_t remainder remainderf remainderl remove remquo
remquof remquol rename renameat rewind rindex rint rintf rintl round roundf
roundl rpmatch scalb scalbf scalbl scalbln scalblnf scalblnl scalbn scalbnf
scalbnl scanf seed48 seed48_r select setbuf setbuffer setenv setlinebuf
setstate setstate_r setvbuf signbit signgam significand significandf
significandl sigset_t sin sinf sinh sinhf sinhl sinl size_t snprintf sprintf
sqrt sqrtf sqrtl srand srand48 srand48_r srandom srandom_r sscanf ssize_t
stderr stdin stdout stpcpy stpncpy strcasecmp strcasecmp_l strcat strchr
strcmp strcoll strcoll_l strcpy strcspn strdup strerror strerror_l strerror_r
strlen strncasecmp strncasecmp_l strncat strncmp strncpy strndup strnlen
strpbrk strrchr strsep strsignal strspn strstr strtod strtof strtok strtok_r
strtol strtold strtoll strtoq strtoul strtoull strtouq strxfrm strxfrm_l
suseconds_t system tan tanf tanh tanhf tanhl tanl tempnam tgamma tgammaf
tgammal time_t timer_t timespec timeval tmpfile tmpnam tmpnam_r true trunc
truncf truncl u_char u_int u_int16_t u_int32_t u_int64_t u_int8_t u_long
u_quad_t u_short uid_t uint uint16_t uint32_t uint64_t uint8_t uint_fast16_t
uint_fast32_t uint_fast64_t uint_fast8_t uint_least16_t uint_least32_t
uint_least64_t uint_least8_t uintmax_t uintptr_t ulong ungetc unix unsetenv
ushort va_arg va_copy va_end va_list va_start valloc vdprintf vfprintf vfscanf
vprintf vscanf vsnprintf vsprintf vsscanf wchar_t wcstombs wctomb y0 y0f y0l
y1 y1f y1l yn ynf ynl
""".split())

HEADERS = ("stdint.h", "stdbool.h", "stddef.h", "math.h", "stdio.h",
           "stdlib.h", "string.h", "immintrin.h")


def program_names(basename: str) -> frozenset:
    """Names one generated file pair defines from its basename."""
    guard = re.sub(r"[^A-Za-z0-9]", "_", basename).upper() + "_H"
    return frozenset({f"{basename}_Context", guard})


def is_reserved(name: str, extra=frozenset()) -> bool:
    """Whether a user name must not be printed as is in C."""
    return (name in KEYWORDS or name in BACKEND_NAMES or name in HEADER_NAMES
            or name in OTHER_HEADER_NAMES or name in extra
            or _PATTERN.match(name) is not None)


def reserved_pattern(name: str) -> bool:
    """Reserved by a pattern, so no ``_k`` suffix makes it free."""
    return _PATTERN.match(name) is not None


def reserved_why(name: str, extra=frozenset()) -> str:
    """A few words on why ``name`` is reserved, for error messages."""
    if name in KEYWORDS:
        return "a C or C++ keyword"
    if name in extra:
        return "the backend generates it for this file"
    if name in BACKEND_NAMES or re.match(r"exo_|EXO_", name):
        return "the backend's own C uses it"
    if name in HEADER_NAMES:
        return "a macro or name of a header the C includes"
    if name in OTHER_HEADER_NAMES:
        return "a macro of a standard header a program may include with it"
    if re.match(r"GOMP_|omp_|kmp_", name):
        return "the OpenMP runtime uses it"
    return "the C standard reserves it for the implementation"


def _header_names(ccs=("gcc", "clang"), stds=("c11", "gnu11", "gnu17")):
    """Recompute ``HEADER_NAMES`` (needs gcc and clang; development only)."""
    import os
    import subprocess
    import tempfile
    names = set()
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "h.c")
        with open(src, "w") as f:
            f.write("".join(f"#include <{h}>\n" for h in HEADERS))
        for cc in ccs:
            for std in stds:
                flags = [cc, f"-std={std}", "-march=native"]
                out = subprocess.run(flags + ["-dM", "-E", src], check=True,
                                     capture_output=True, text=True).stdout
                names.update(re.findall(r"^#define (\w+)", out, re.M))
                if cc != "clang":
                    continue
                ast = subprocess.run(
                    flags + ["-fsyntax-only", "-Xclang", "-ast-dump", src],
                    capture_output=True, text=True).stdout
                names.update(re.findall(r"^[|`]-(?:Function|Typedef|Var|Enum)"
                                        r"Decl\b[^']*?(\w+) '", ast, re.M))
                names.update(re.findall(r"-EnumConstantDecl\b[^']*?(\w+) '",
                                        ast))
                names.update(re.findall(r"^[|`]-RecordDecl\b.*?"
                                        r"(?:struct|union) (\w+)", ast, re.M))
    return sorted(n for n in names if not n.startswith("_"))


if __name__ == "__main__":  # pragma: no cover - maintenance
    import textwrap
    print(textwrap.fill(" ".join(_header_names()), 78))
