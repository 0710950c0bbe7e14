# Decide CMAKE_CUDA_ARCHITECTURES before project() enables CUDA.
#
# Order of precedence:
#   1. the user's -DCMAKE_CUDA_ARCHITECTURES=... (or the CUDAARCHS environment variable) always wins;
#   2. `native` when a GPU is visible (nvidia-smi lists one);
#   3. otherwise a fixed list that includes sm_90, so configure and build succeed on a machine with
#      no GPU (plain `native` fails at configure time there).
set(CML_FALLBACK_CUDA_ARCHITECTURES "90" CACHE STRING
    "Architectures used when no GPU is visible and the user did not choose")

if(DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CML_ARCH_REASON "set by the user")
elseif(DEFINED ENV{CUDAARCHS})
  set(CML_ARCH_REASON "from the CUDAARCHS environment variable")
else()
  set(_cml_gpu_visible FALSE)
  find_program(CML_NVIDIA_SMI nvidia-smi)
  if(CML_NVIDIA_SMI)
    execute_process(COMMAND ${CML_NVIDIA_SMI} -L
                    RESULT_VARIABLE _cml_smi_rc OUTPUT_VARIABLE _cml_smi_out ERROR_QUIET
                    TIMEOUT 20)
    if(_cml_smi_rc EQUAL 0 AND _cml_smi_out MATCHES "GPU [0-9]+:")
      set(_cml_gpu_visible TRUE)
    endif()
  endif()
  if(_cml_gpu_visible)
    set(CMAKE_CUDA_ARCHITECTURES native CACHE STRING "CUDA architectures")
    set(CML_ARCH_REASON "native: a GPU is visible")
  else()
    set(CMAKE_CUDA_ARCHITECTURES ${CML_FALLBACK_CUDA_ARCHITECTURES} CACHE STRING "CUDA architectures")
    set(CML_ARCH_REASON "no GPU visible: fixed fallback list")
  endif()
endif()
