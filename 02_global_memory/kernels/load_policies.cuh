// How a kernel loads from global memory, as a template parameter, so one kernel body serves the plain
// load, the cache-hint intrinsics and the read-only path.
//
// [doc:load_sass]
// What each becomes on sm_90 (nvcc 13.0, read back with cuobjdump -sass):
//   PlainLoad       LDG.E                 default: cached in L1 and L2 (-Xptxas -dlcm=ca turns it into
//                                         LDG.E.STRONG.SM, -dlcm=cg into LDG.E.STRONG.GPU, see load_caching.cu)
//   CacheAllLoad    LDG.E.STRONG.SM       __ldca, ld.global.ca: "cache at all levels"
//   CacheGlobalLoad LDG.E.STRONG.GPU      __ldcg, ld.global.cg: served at GPU scope, i.e. by L2, not L1
//   StreamingLoad   LDG.E.EF              __ldcs, ld.global.cs: evict-first, for data read once
//   ReadOnlyLoad    LDG.E.CONSTANT        __ldg, ld.global.nc: the non-coherent read-only path
// [/doc:load_sass]
#pragma once

#include <cuda_runtime.h>

namespace cml::ch02 {

struct PlainLoad {
  template <class T>
  __device__ static T load(const T* p) {
    return *p;
  }
};

struct CacheAllLoad {
  template <class T>
  __device__ static T load(const T* p) {
    return __ldca(p);
  }
};

struct CacheGlobalLoad {
  template <class T>
  __device__ static T load(const T* p) {
    return __ldcg(p);
  }
};

struct StreamingLoad {
  template <class T>
  __device__ static T load(const T* p) {
    return __ldcs(p);
  }
};

struct ReadOnlyLoad {
  template <class T>
  __device__ static T load(const T* p) {
    return __ldg(p);
  }
};

}  // namespace cml::ch02
