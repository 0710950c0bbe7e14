// Thread-block clusters and distributed shared memory (compute capability 9.0 and later).
//
// The blocks of a cluster run at the same time on SMs of one GPC, and each can read, write and update the
// shared memory of the others: cluster.map_shared_rank(p, r) turns the address of a __shared__ variable of
// this block into the address of the same variable in the block of cluster rank r. Such an access leaves the
// SM and crosses the GPC's SM-to-SM network, so it costs more than a load from the block's own shared memory,
// and far less than a round trip through L2. cluster.sync() is the cluster's barrier: every block has
// arrived, and every write made before it is visible to every block of the cluster after it.
//
// Two rules keep remote accesses safe: a block may only touch another block's shared memory after a
// cluster.sync() that follows the owner's initialisation, and it must not exit while others may still
// access its shared memory (a last cluster.sync() before the end).
//
// Kernels:
//   dsmem_chase_kernel      one thread follows a random ring of byte offsets in its own shared memory, in
//                           its own through map_shared_rank, or in rank 1's: cycles per dependent load
//   dsmem_read_kernel       every thread streams 16-byte loads from its block's buffer or its neighbour's
//   histogram_shared_kernel a histogram whose bins are split over the blocks of a cluster (ClusterSize 1:
//                           the whole histogram in one block's shared memory)
//   histogram_global_kernel every key is one atomicAdd on the output histogram in global memory
// On GPUs before sm_90 the cluster kernels are compiled as a trap and never launched (the demo waives).
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "03_shared_memory/kernels/dsmem_reference.hpp"
#include "03_shared_memory/kernels/latency.cuh"
#include "common/cuda_check.hpp"

namespace cml::ch03 {

inline constexpr int kDsmemChaseBlock = 256;  // threads that copy the ring into shared memory
inline constexpr int kHistBlock = 1024;

// Where the chasing thread (rank 0, thread 0) finds the ring.
enum class ChaseTarget { own, own_mapped, neighbour };

namespace {

namespace cg = cooperative_groups;

// The cluster as the kernels see it, for a compile-time cluster size. Size 1 needs no cluster at all (a
// plain launch, any GPU). Larger sizes need sm_90; an older target gets a trap, never launched.
template <int ClusterSize>
struct ClusterView {
  __device__ static unsigned rank() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    return 0;
#else
    if constexpr (ClusterSize == 1) return 0;
    else return cg::this_cluster().block_rank();
#endif
  }
  __device__ static void sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    if constexpr (ClusterSize > 1) __trap();
    __syncthreads();
#else
    if constexpr (ClusterSize == 1) __syncthreads();
    else cg::this_cluster().sync();
#endif
  }
  // The same shared variable in the block of cluster rank r.
  template <class T>
  __device__ static T* map(T* p, unsigned r) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    (void)r;
    if constexpr (ClusterSize > 1) __trap();
    return p;
#else
    if constexpr (ClusterSize == 1) {
      (void)r;
      return p;
    } else {
      return cg::this_cluster().map_shared_rank(p, r);
    }
#endif
  }
};

// ---- Latency ------------------------------------------------------------------------------------------

// Launched as one cluster of two blocks. Both copy the ring (byte offsets: the word at offset o holds the
// offset of the next hop) into their shared memory; thread 0 of rank 0 then follows it `hops` times.
// out[0] = the offset where the chase ended, out[1] = SM cycles for the hops.
template <ChaseTarget Target>
__global__ void __launch_bounds__(kDsmemChaseBlock)
    dsmem_chase_kernel(const std::uint32_t* __restrict__ ring, int ring_words, std::uint32_t start, int hops,
                       unsigned long long* __restrict__ out) {
  extern __shared__ std::uint32_t dsmem_ring[];
  using Cluster = ClusterView<2>;
  for (int i = threadIdx.x; i < ring_words; i += blockDim.x) dsmem_ring[i] = ring[i];
  Cluster::sync();  // rank 1's ring is written before rank 0 reads it
  if (Cluster::rank() == 0 && threadIdx.x == 0) {
    // own: a __shared__ pointer, so the compiler emits LDS. The mapped targets are generic addresses in the
    // cluster's shared window: a load the SM routes by address, to itself or across the network.
    const std::uint32_t* words = dsmem_ring;
    if constexpr (Target == ChaseTarget::own_mapped) words = Cluster::map(dsmem_ring, 0);
    if constexpr (Target == ChaseTarget::neighbour) words = Cluster::map(dsmem_ring, 1);
    const char* const base = reinterpret_cast<const char*>(words);
    timed_chase(start, hops, [base](std::uint32_t off) { return *reinterpret_cast<const std::uint32_t*>(base + off); },
                out);
  }
  Cluster::sync();  // rank 1 stays (and keeps its shared memory) until the chase is over
}

// ---- Bandwidth ----------------------------------------------------------------------------------------

// Every block fills kDsmemReadWords words of shared memory with dsmem_read_word(rank, w); then each thread
// reads, `passes` times, kDsmemReadSteps 16-byte elements (s, s + 256, ..., its start s rotating by a warp
// each pass) of its own buffer or of the buffer of rank + 1 (mod the cluster size), and stores the 32-bit
// sum of every word it read.
template <bool Neighbour>
__global__ void __launch_bounds__(kDsmemReadBlock)
    dsmem_read_kernel(int passes, std::uint32_t* __restrict__ out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  (void)passes, (void)out;
  __trap();
#else
  __shared__ uint4 buffer[kDsmemReadWords / 4];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  auto* words = reinterpret_cast<std::uint32_t*>(buffer);
  for (unsigned w = threadIdx.x; w < static_cast<unsigned>(kDsmemReadWords); w += blockDim.x)
    words[w] = dsmem_read_word(rank, w);
  cluster.sync();  // the neighbour's buffer is filled before anyone reads it
  const uint4* src = buffer;
  if constexpr (Neighbour) src = cluster.map_shared_rank(buffer, (rank + 1) % cluster.num_blocks());
  std::uint32_t acc = 0;
  for (int p = 0; p < passes; ++p) {
    // Each pass starts elsewhere (dsmem_read_start): with the same addresses every pass, the compiler would
    // load once and reuse the registers, and the loop would measure nothing.
    const uint4* s = src + dsmem_read_start(threadIdx.x, static_cast<std::uint64_t>(p));
    uint4 v[kDsmemReadSteps];
#pragma unroll
    for (int j = 0; j < kDsmemReadSteps; ++j) v[j] = s[j * kDsmemReadBlock];  // all in flight before any use
#pragma unroll
    for (int j = 0; j < kDsmemReadSteps; ++j) acc += v[j].x + v[j].y + v[j].z + v[j].w;
  }
  out[static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = acc;
  cluster.sync();  // no block leaves while its neighbour may still read its buffer
#endif
}

// ---- Histogram ----------------------------------------------------------------------------------------

// Calls count(key) for every key of a grid-stride split of keys[0, n): 16-byte loads, then the n % 4 tail.
template <class Count>
__device__ void for_each_key(const std::uint32_t* __restrict__ keys, std::size_t n, Count&& count) {
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t n4 = n / 4;
  const auto* keys4 = reinterpret_cast<const uint4*>(keys);
  for (std::size_t i = thread; i < n4; i += threads) {
    const uint4 k = keys4[i];
    count(k.x);
    count(k.y);
    count(k.z);
    count(k.w);
  }
  if (thread < n - 4 * n4) count(keys[4 * n4 + thread]);
}

// The bins are split into ClusterSize slices of bins / ClusterSize consecutive bins, slice r in the shared
// memory of the block of rank r. Every block counts its part of the keys into whichever block owns each key's
// bin, then adds its own slice (the whole cluster's counts for those bins) into the global histogram.
// `out` must be zero before the launch; bins is a power of two, 2^bins_log2.
template <int ClusterSize>
__global__ void __launch_bounds__(kHistBlock)
    histogram_shared_kernel(const std::uint32_t* __restrict__ keys, std::size_t n, int bins_log2,
                            std::uint32_t* __restrict__ out) {
  extern __shared__ std::uint32_t hist_slice[];
  using Cluster = ClusterView<ClusterSize>;
  static_assert(ClusterSize == 1 || ClusterSize == 2 || ClusterSize == 4 || ClusterSize == 8,
                "a power-of-two cluster of at most 8 (portable) splits the bins evenly");
  const std::uint32_t bins = 1u << bins_log2;
  const int slice_log2 = bins_log2 - (ClusterSize >= 8 ? 3 : ClusterSize >= 4 ? 2 : ClusterSize >= 2 ? 1 : 0);
  const std::uint32_t slice = 1u << slice_log2;  // shifts and masks: slice is a run-time power of two
  // [doc:cluster_histogram]
  for (std::uint32_t i = threadIdx.x; i < slice; i += blockDim.x) hist_slice[i] = 0;
  Cluster::sync();  // every slice of the cluster is zero before any block counts into it
  for_each_key(keys, n, [&](std::uint32_t key) {
    const std::uint32_t bin = histogram_bin(key, bins);
    if constexpr (ClusterSize == 1) {
      atomicAdd(&hist_slice[bin], 1u);
    } else {
      // The owner's slot, in its shared memory; with random keys (ClusterSize - 1) / ClusterSize of the
      // updates cross the SM-to-SM network.
      std::uint32_t* owner = Cluster::map(hist_slice, bin >> slice_log2);
      atomicAdd(owner + (bin & (slice - 1)), 1u);
    }
  });
  Cluster::sync();  // every update of this cluster has landed (and no slice is left while others update it)
  // [/doc:cluster_histogram]
  std::uint32_t* dst = out + static_cast<std::size_t>(Cluster::rank()) * slice;
  for (std::uint32_t i = threadIdx.x; i < slice; i += blockDim.x) {
    const std::uint32_t c = hist_slice[i];
    if (c != 0) atomicAdd(dst + i, c);
  }
}

__global__ void __launch_bounds__(kHistBlock)
    histogram_global_kernel(const std::uint32_t* __restrict__ keys, std::size_t n, std::uint32_t bins,
                            std::uint32_t* __restrict__ out) {
  for_each_key(keys, n, [&](std::uint32_t key) { atomicAdd(&out[histogram_bin(key, bins)], 1u); });
}

__global__ void fill_histogram_keys_kernel(std::uint32_t* __restrict__ keys, std::size_t n) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    keys[i] = histogram_key(i);
}

// ---- Host side ----------------------------------------------------------------------------------------

inline int current_device_sm_count() {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

// "" when `device` can launch thread-block clusters, else why not.
inline std::string cluster_unavailable_reason(int device) {
  int cluster_launch = 0, major = 0, minor = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, device));
  if (major >= 9 && cluster_launch != 0) return "";
  return "thread-block clusters and distributed shared memory need compute capability 9.0 or later with cluster "
         "launch support; this GPU is " +
         std::to_string(major) + "." + std::to_string(minor);
}

// A launch configuration with a cluster dimension; the attribute array lives in the object.
struct ClusterLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute[1]{};
  ClusterLaunch(unsigned blocks, unsigned threads, std::size_t smem, unsigned cluster, cudaStream_t s) {
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = smem;
    config.stream = s;
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = cluster;
    attribute[0].val.clusterDim.y = 1;
    attribute[0].val.clusterDim.z = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
  }
};

// How many clusters of `cluster` blocks (threads, smem each) of `kernel` can be resident at once; 0 when the
// cluster cannot be launched at all (`why` says why). Cluster sizes above 8 are non-portable: the kernel
// must opt in, and the answer depends on how many SMs a GPC of this GPU has.
template <class Kernel>
int max_active_clusters(Kernel kernel, unsigned threads, std::size_t smem, unsigned cluster, std::string* why) {
  if (cluster > 8) CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  if (smem > 48 * 1024)
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  ClusterLaunch l(cluster, threads, smem, cluster, nullptr);
  int clusters = 0;
  const cudaError_t err = cudaOccupancyMaxActiveClusters(&clusters, kernel, &l.config);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: the answer is "this size cannot run here"
    if (why != nullptr) *why = std::string("cudaOccupancyMaxActiveClusters: ") + cudaGetErrorString(err);
    return 0;
  }
  if (clusters == 0 && why != nullptr) *why = "cudaOccupancyMaxActiveClusters found no SM group that fits one cluster";
  return clusters;
}

// ring_words words of shared memory in each of the two blocks.
template <ChaseTarget Target>
inline void launch_dsmem_chase(const std::uint32_t* ring, int ring_words, std::uint32_t start, int hops,
                               unsigned long long* out, cudaStream_t s) {
  const std::size_t smem = static_cast<std::size_t>(ring_words) * sizeof(std::uint32_t);
  if (smem > 48 * 1024)
    CUDA_CHECK(cudaFuncSetAttribute(dsmem_chase_kernel<Target>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(smem)));
  ClusterLaunch l(2, kDsmemChaseBlock, smem, 2, s);
  CUDA_CHECK(cudaLaunchKernelEx(&l.config, dsmem_chase_kernel<Target>, ring, ring_words, start, hops, out));
}

// Blocks that fill the GPU with clusters of `cluster` blocks of the read kernel (0 and `why` when it cannot).
inline unsigned dsmem_read_blocks(unsigned cluster, bool neighbour, std::string* why) {
  const int clusters = neighbour ? max_active_clusters(dsmem_read_kernel<true>, kDsmemReadBlock, 0, cluster, why)
                                 : max_active_clusters(dsmem_read_kernel<false>, kDsmemReadBlock, 0, cluster, why);
  return static_cast<unsigned>(clusters) * cluster;
}

// `out` holds blocks * kDsmemReadBlock words; blocks is a multiple of cluster.
inline void launch_dsmem_read(bool neighbour, unsigned blocks, unsigned cluster, int passes, std::uint32_t* out,
                              cudaStream_t s) {
  ClusterLaunch l(blocks, kDsmemReadBlock, 0, cluster, s);
  if (neighbour) CUDA_CHECK(cudaLaunchKernelEx(&l.config, dsmem_read_kernel<true>, passes, out));
  else CUDA_CHECK(cudaLaunchKernelEx(&l.config, dsmem_read_kernel<false>, passes, out));
}

// How one histogram variant is launched: grid, shared memory per block, the cluster.
struct HistogramLaunch {
  unsigned blocks = 0;
  unsigned cluster = 1;  // 0: global atomics (no shared memory)
  std::size_t smem = 0;  // bytes of shared memory per block
  int bins_log2 = 0;
  std::string why_not;  // non-empty when this configuration cannot run on this GPU
};

inline int bins_log2_of(std::uint32_t bins) {
  int l = 0;
  while ((1u << l) < bins) ++l;
  return l;
}

template <int ClusterSize>
inline HistogramLaunch plan_histogram_shared(std::uint32_t bins) {
  HistogramLaunch h;
  h.cluster = ClusterSize;
  h.bins_log2 = bins_log2_of(bins);
  h.smem = static_cast<std::size_t>(bins / ClusterSize) * sizeof(std::uint32_t);
  int device = 0, optin = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (h.smem > static_cast<std::size_t>(optin)) {
    h.why_not = std::to_string(bins / ClusterSize) + " bins of 4 bytes do not fit in one block's shared memory (" +
                std::to_string(optin / 1024) + " KiB at most)";
    return h;
  }
  const auto kernel = histogram_shared_kernel<ClusterSize>;
  if constexpr (ClusterSize == 1) {
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(h.smem)));
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kHistBlock, h.smem));
    h.blocks = static_cast<unsigned>(per_sm * current_device_sm_count());
    if (h.blocks == 0) h.why_not = "no SM can hold one block of this kernel";
  } else {
    h.blocks = static_cast<unsigned>(max_active_clusters(kernel, kHistBlock, h.smem, ClusterSize, &h.why_not)) *
               ClusterSize;
  }
  return h;
}

inline HistogramLaunch plan_histogram_global(std::uint32_t bins) {
  HistogramLaunch h;
  h.cluster = 0;
  h.bins_log2 = bins_log2_of(bins);
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, histogram_global_kernel, kHistBlock, 0));
  h.blocks = static_cast<unsigned>(per_sm * current_device_sm_count());
  return h;
}

// Zeroes the `out` histogram (1 << h.bins_log2 words), then counts keys[0, n) into it.
inline void launch_histogram(const HistogramLaunch& h, const std::uint32_t* keys, std::size_t n, std::uint32_t* out,
                             cudaStream_t s) {
  const std::uint32_t bins = 1u << h.bins_log2;
  CUDA_CHECK(cudaMemsetAsync(out, 0, bins * sizeof(std::uint32_t), s));
  if (h.cluster == 0) {
    histogram_global_kernel<<<h.blocks, kHistBlock, 0, s>>>(keys, n, bins, out);
    CUDA_CHECK_LAUNCH();
  } else if (h.cluster == 1) {
    histogram_shared_kernel<1><<<h.blocks, kHistBlock, h.smem, s>>>(keys, n, h.bins_log2, out);
    CUDA_CHECK_LAUNCH();
  } else {
    ClusterLaunch l(h.blocks, kHistBlock, h.smem, h.cluster, s);
    switch (h.cluster) {
      case 2: CUDA_CHECK(cudaLaunchKernelEx(&l.config, histogram_shared_kernel<2>, keys, n, h.bins_log2, out)); break;
      case 4: CUDA_CHECK(cudaLaunchKernelEx(&l.config, histogram_shared_kernel<4>, keys, n, h.bins_log2, out)); break;
      case 8: CUDA_CHECK(cudaLaunchKernelEx(&l.config, histogram_shared_kernel<8>, keys, n, h.bins_log2, out)); break;
      default: throw std::invalid_argument("histogram cluster size must be 1, 2, 4 or 8");
    }
  }
}

// The same plan for a cluster size chosen at run time (2, 4 or 8).
inline HistogramLaunch plan_histogram_cluster(unsigned cluster, std::uint32_t bins) {
  switch (cluster) {
    case 1: return plan_histogram_shared<1>(bins);
    case 2: return plan_histogram_shared<2>(bins);
    case 4: return plan_histogram_shared<4>(bins);
    case 8: return plan_histogram_shared<8>(bins);
    default: throw std::invalid_argument("histogram cluster size must be 1, 2, 4 or 8");
  }
}

inline void launch_fill_histogram_keys(std::uint32_t* keys, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>(4 * current_device_sm_count());
  fill_histogram_keys_kernel<<<blocks, 256, 0, s>>>(keys, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch03
