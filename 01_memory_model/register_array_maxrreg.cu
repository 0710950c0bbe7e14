// array_registers_kernel again, compiled with -maxrregcount=CML_CH01_MAXRREG (CMakeLists.txt): the header's
// kernels have internal linkage, so this translation unit owns a separately compiled copy.
#include "01_memory_model/kernels/register_array_maxrreg.hpp"

#include "01_memory_model/kernels/register_array.cuh"

#ifndef CML_CH01_MAXRREG
#error "compile with -DCML_CH01_MAXRREG=<n> and the matching -maxrregcount=<n>"
#endif

namespace cml::ch01 {

int maxrreg_limit() { return CML_CH01_MAXRREG; }

void launch_array_registers_maxrreg(const unsigned* seeds, unsigned* out, unsigned n, cudaStream_t s) {
  launch_array_registers(seeds, out, n, s);
}

cudaFuncAttributes array_registers_maxrreg_attributes() { return function_attributes(array_registers_kernel); }

}  // namespace cml::ch01
