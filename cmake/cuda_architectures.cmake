# Decide CMAKE_CUDA_ARCHITECTURES before project() enables CUDA.
#
# Order of precedence:
#   1. the user's -DCMAKE_CUDA_ARCHITECTURES=... (or the CUDAARCHS environment variable) always wins;
#   2. `native` when a GPU is visible (nvidia-smi lists one);
#   3. otherwise code for every GPU from sm_75 (Turing) on that the toolkit supports, so that a build made
#      on a machine with no GPU (CI, a build box) runs on any of them:
#
#        nvcc >= 12.8:  75-real;80-real;86-real;89-real;90-real;100-real;120-real;100-virtual
#        nvcc <  12.8:  75-real;80-real;86-real;89-real;90-real;90-virtual
#
#      Why these: SASS (cubin) built for sm_X.y runs on every sm_X.z with z >= y, and never on another
#      major version. So 75 covers Turing, 80 covers all of 8.x (A100, and 8.6/8.7/8.9 too), 90 Hopper,
#      100 covers 10.x (B200, B300 = 10.3), 120 covers 12.x (RTX 50 = 12.0, DGX Spark = 12.1). 86 and 89
#      are redundant for correctness but are the common consumer parts (RTX 30 / RTX 40, L4, L40), and
#      code scheduled by ptxas for the exact SM is what a reader there should time.
#      PTX is JIT-compiled by the driver for any GPU of its compute capability or later. The PTX kept is
#      compute_100 rather than compute_120: CUDA 13 numbers Jetson Thor sm_110, which no SASS above runs
#      on (other major) and compute_120 PTX cannot target (11.0 < 12.0); compute_100 PTX covers it and
#      every later GPU. Toolkits before 12.8 know no Blackwell: compute_90 PTX lets those GPUs JIT.
#      Each list is intersected with `nvcc --list-gpu-arch`, so a toolkit that dropped an architecture
#      still configures (and if the PTX entry is dropped, the newest remaining one is kept as PTX).
#
# The nvcc version is not known before project(), so nvcc is found as CMake will find it
# (CMAKE_CUDA_COMPILER, then CUDACXX, then PATH and $CUDA_PATH/bin, then /usr/local/cuda/bin) and asked.
# CML_ARCH_REASON is the reason CMakeLists.txt prints beside the list. The automatic choice
# is remembered in the cache, so a later configure of the same build dir reports it as such (and not as
# "set by the user"); delete the build dir (or pass -DCMAKE_CUDA_ARCHITECTURES or set CUDAARCHS) to choose
# again.

# 1. Where is nvcc, which release is it, which architectures does it list? Sets _cml_nvcc,
#    _cml_nvcc_version ("" when unknown) and _cml_nvcc_archs (e.g. 75;80;...; "" when unknown).
function(_cml_find_nvcc_version)
  set(nvcc "")
  if(CMAKE_CUDA_COMPILER)
    set(nvcc "${CMAKE_CUDA_COMPILER}")
  elseif(NOT "$ENV{CUDACXX}" STREQUAL "")
    # CUDACXX may carry arguments after the program, as CMake allows.
    get_filename_component(nvcc "$ENV{CUDACXX}" PROGRAM)
  endif()
  if(nvcc AND NOT IS_ABSOLUTE "${nvcc}")
    find_program(_cml_nvcc_abs NAMES "${nvcc}" NO_CACHE)
    set(nvcc "${_cml_nvcc_abs}")
  endif()
  if(NOT nvcc)
    set(hints /usr/local/cuda/bin)
    if(NOT "$ENV{CUDA_PATH}" STREQUAL "")
      list(PREPEND hints "$ENV{CUDA_PATH}/bin")
    endif()
    find_program(_cml_nvcc_path NAMES nvcc PATHS ${hints} NO_CACHE)
    set(nvcc "${_cml_nvcc_path}")
  endif()
  set(version "")
  set(arch_list "")
  if(nvcc)
    execute_process(COMMAND "${nvcc}" --version RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_QUIET
                    TIMEOUT 60)
    if(rc EQUAL 0 AND out MATCHES "release ([0-9]+)\\.([0-9]+)")
      set(version "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
    endif()
    # "compute_75\ncompute_80\n..." (nvcc >= 11.0); left empty when this nvcc cannot say.
    execute_process(COMMAND "${nvcc}" --list-gpu-arch RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_QUIET
                    TIMEOUT 60)
    if(rc EQUAL 0)
      string(REGEX MATCHALL "compute_[0-9]+" arch_list "${out}")
      list(TRANSFORM arch_list REPLACE "compute_" "")
    endif()
  endif()
  set(_cml_nvcc "${nvcc}" PARENT_SCOPE)
  set(_cml_nvcc_version "${version}" PARENT_SCOPE)
  set(_cml_nvcc_archs "${arch_list}" PARENT_SCOPE)
endfunction()

# 2. The fallback list for that release, filtered by what the toolkit lists. Sets _cml_fallback.
function(_cml_fallback_architectures version supported)
  if(version AND version VERSION_GREATER_EQUAL 12.8)
    set(want 75-real 80-real 86-real 89-real 90-real 100-real 120-real 100-virtual)
  else()
    set(want 75-real 80-real 86-real 89-real 90-real 90-virtual)
  endif()
  if(supported)
    set(kept "")
    set(ptx "")
    set(newest_real "")
    foreach(a IN LISTS want)
      string(REGEX REPLACE "-.*" "" n "${a}")
      if(NOT n IN_LIST supported)
        continue()
      endif()
      if(a MATCHES "-virtual$")
        set(ptx "${a}")
      else()
        list(APPEND kept "${a}")
        set(newest_real "${n}")
      endif()
    endforeach()
    if(NOT ptx AND newest_real)
      set(ptx "${newest_real}-virtual")
    endif()
    set(want ${kept} ${ptx})
  endif()
  set(_cml_fallback "${want}" PARENT_SCOPE)
endfunction()

set(_cml_cached_auto FALSE)
if(DEFINED CMAKE_CUDA_ARCHITECTURES AND DEFINED CML_CUDA_ARCH_AUTO_VALUE
   AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "${CML_CUDA_ARCH_AUTO_VALUE}")
  set(_cml_cached_auto TRUE)
endif()
if(_cml_cached_auto AND NOT "$ENV{CUDAARCHS}" STREQUAL "")
  # CMake reads CUDAARCHS only when the cache holds no list yet; here it holds the automatic one, which the
  # user's choice replaces.
  set(CMAKE_CUDA_ARCHITECTURES "$ENV{CUDAARCHS}" CACHE STRING "CUDA architectures" FORCE)
  unset(CML_CUDA_ARCH_AUTO_VALUE CACHE)
  set(CML_ARCH_REASON "from the CUDAARCHS environment variable")
elseif(_cml_cached_auto)
  set(CML_ARCH_REASON "${CML_CUDA_ARCH_AUTO_REASON}, chosen at this build dir's first configure")
elseif(DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CML_ARCH_REASON "set by the user")
elseif(NOT "$ENV{CUDAARCHS}" STREQUAL "")
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
    set(_cml_arch native)
    set(_cml_reason "native: a GPU is visible")
  else()
    _cml_find_nvcc_version()
    _cml_fallback_architectures("${_cml_nvcc_version}" "${_cml_nvcc_archs}")
    set(_cml_arch "${_cml_fallback}")
    if(_cml_nvcc_version)
      string(CONCAT _cml_reason "no GPU visible: every GPU from sm_75 on that nvcc ${_cml_nvcc_version} supports "
                    "(SASS for the -real entries, PTX the driver JIT-compiles for the rest)")
    else()
      set(_cml_reason "no GPU visible, nvcc version unknown: the list for CUDA 12.0-12.7 (SASS + PTX)")
      message(WARNING "cuda-memory-lab: could not run 'nvcc --version' (looked at CMAKE_CUDA_COMPILER, "
                      "CUDACXX, PATH, /usr/local/cuda/bin); assuming a toolkit older than 12.8")
    endif()
    if(_cml_nvcc_version AND _cml_nvcc_version VERSION_LESS 12.0)
      message(WARNING "cuda-memory-lab: nvcc ${_cml_nvcc_version} is older than the CUDA 12.x this project "
                      "is written for")
    endif()
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${_cml_arch}" CACHE STRING "CUDA architectures")
  set(CML_CUDA_ARCH_AUTO_VALUE "${_cml_arch}" CACHE INTERNAL "CMAKE_CUDA_ARCHITECTURES as chosen automatically")
  set(CML_CUDA_ARCH_AUTO_REASON "${_cml_reason}" CACHE INTERNAL "why")
  set(CML_ARCH_REASON "${_cml_reason}")
endif()
