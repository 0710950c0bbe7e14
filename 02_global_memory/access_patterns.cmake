# Chapter 02, access patterns: misalignment, strides, L1 vs L2 loads, the read-only path, AoS vs SoA,
# vector width, managed vs manual memory. Each demo is one .cu file; kernels live in kernels/.
add_demo(misaligned_read SOURCES misaligned_read.cu)
add_demo(misaligned_write SOURCES misaligned_write.cu)
add_demo(strided_copy SOURCES strided_copy.cu)
# One source, two binaries: global loads cached in L1 (-dlcm=ca) or served by L2 only (-dlcm=cg).
# [doc:dlcm_builds]
foreach(mode ca cg)
  add_demo(load_caching_dlcm_${mode} SOURCES load_caching.cu COMPILE_OPTIONS -Xptxas=-dlcm=${mode})
  target_compile_definitions(load_caching_dlcm_${mode} PRIVATE CML_DLCM=${mode})
endforeach()
# [/doc:dlcm_builds]
add_demo(read_only_path SOURCES read_only_path.cu)
add_demo(aos_vs_soa SOURCES aos_vs_soa.cu)
add_demo(vector_width SOURCES vector_width.cu)
add_demo(managed_vs_manual SOURCES managed_vs_manual.cu)
# Compressible memory (driver VMM API through the runtime entry points: no -lcuda).
add_demo(compressible_memory SOURCES compressible_memory.cu)
