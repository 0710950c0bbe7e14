// The register-array kernel compiled in its own translation unit with -maxrregcount (see
// register_array_maxrreg.cu and CMakeLists.txt): nvcc's register cap applies to a whole translation
// unit, so this is how one kernel of a program gets it and the others do not.
#pragma once

#include <cuda_runtime.h>

namespace cml::ch01 {

// The -maxrregcount value the translation unit was compiled with (set once, in CMakeLists.txt).
int maxrreg_limit();
void launch_array_registers_maxrreg(const unsigned* seeds, unsigned* out, unsigned n, cudaStream_t s);
cudaFuncAttributes array_registers_maxrreg_attributes();

}  // namespace cml::ch01
