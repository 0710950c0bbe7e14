# Shared-memory (tiled) transposes: unpadded, padded, swizzled, several elements per thread, and the
# 64 x 64 float4 tiles, against the naive global transpose and cudaMemcpy D2D. The two larger runs put the
# fastest transpose beside the copy with its access pattern where that pattern falls short of cudaMemcpy.
add_demo(transpose_shared SOURCES transpose_shared.cu
         EXTRA_RUNS "transpose_shared_16384|--size 16384"
                    "transpose_shared_30000|--size 30000 --variant tile64_vec4_3pb_col_pf --variant tile_move_vec4_col_pf"
                    "transpose_shared_32768|--size 32768 --variant tile64_vec4_3pb_col_pf --variant tile_move_vec4_col_pf"
         BAD_OPTIONS "--cols 0" "--rows 1G --cols 1G")
