# Chapter 03: banks, padding, reductions, synchronization, distributed shared memory, asynchronous copies and
# the TMA (the tiled transposes are in transpose.cmake).
add_demo(smem_square SOURCES smem_square.cu
         BAD_OPTIONS "--rounds 1M" "--rounds 0")
add_demo(smem_rectangle SOURCES smem_rectangle.cu
         BAD_OPTIONS "--rounds 1M" "--rounds 0")
add_demo(bank_conflicts SOURCES bank_conflicts.cu
         BAD_OPTIONS "--size 2M" "--size 17")
add_demo(bank_width SOURCES bank_width.cu
         BAD_OPTIONS "--size 2M" "--size 17")
add_demo(smem_vs_global SOURCES smem_vs_global.cu
         BAD_OPTIONS "--size 1k")
add_demo(reduce_integer SOURCES reduce_integer.cu)
add_demo(sync_fences SOURCES sync_fences.cu
         BAD_OPTIONS "--runs 100001" "--runs 0")
add_demo(distributed_shared SOURCES distributed_shared.cu
         BAD_OPTIONS "--hops 20M" "--hops 0" "--passes 200000")
# Streaming through shared memory: the synchronous tile copy against cuda::memcpy_async in a 1- to 4-stage
# cuda::pipeline, at one block per SM and at many.
add_demo(async_pipeline SOURCES async_pipeline.cu)
# Copies by the Tensor Memory Accelerator: 1D bulk requests of 256 B to 32 KiB and 2D tensor boxes.
add_demo(tma_copy SOURCES tma_copy.cu)
