# Shared-memory (tiled) transposes (issue 5): unpadded, padded, swizzled, several elements per thread,
# and the 64 x 64 float4 tiles that must reach 0.90x cudaMemcpy D2D.
add_demo(transpose_shared SOURCES transpose_shared.cu)
