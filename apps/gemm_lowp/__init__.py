"""bf16 and int8 GEMM on AVX-512 BF16/VNNI (see README.md)."""
