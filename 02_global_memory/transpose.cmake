# Global-memory transposes: copy bounds, naive, unrolled, diagonal, block-shape sweep.
add_demo(transpose_global SOURCES transpose_global.cu
         BAD_OPTIONS "--rows 0" "--rows 1G --cols 1G")
