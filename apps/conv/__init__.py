"""The x86 conv layer: a 3x3 convolution + bias + ReLU in f32, NHWC,
scheduled for AVX2 or AVX-512 (picked at run time)."""
