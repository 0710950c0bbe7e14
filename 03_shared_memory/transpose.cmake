# Shared-memory (tiled) transposes: unpadded, padded, swizzled, several elements per thread, and the
# 64 x 64 float4 tiles, against the naive global transpose and cudaMemcpy D2D.
add_demo(transpose_shared SOURCES transpose_shared.cu
         EXTRA_RUNS "transpose_shared_16384|--size 16384"
         BAD_OPTIONS "--cols 0" "--rows 1G --cols 1G")
