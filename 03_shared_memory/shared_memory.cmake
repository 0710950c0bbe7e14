# Chapter 03: banks, padding, reductions, synchronization and distributed shared memory (the tiled transposes
# are in transpose.cmake).
add_demo(smem_square SOURCES smem_square.cu)
add_demo(smem_rectangle SOURCES smem_rectangle.cu)
add_demo(bank_conflicts SOURCES bank_conflicts.cu)
add_demo(bank_width SOURCES bank_width.cu)
add_demo(smem_vs_global SOURCES smem_vs_global.cu)
add_demo(reduce_integer SOURCES reduce_integer.cu)
add_demo(sync_fences SOURCES sync_fences.cu)
add_demo(distributed_shared SOURCES distributed_shared.cu)
