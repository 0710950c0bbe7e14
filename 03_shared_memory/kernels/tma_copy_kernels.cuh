// The TMA copies of tma_copy: a buffer copied through shared memory by 1D bulk copies (a ring per block, or
// one request per block), by the same ring filled with cp.async instead of the TMA, and by 2D tensor copies;
// with their host launchers. The instructions, the ring and the tickets are in tma_ptx.cuh.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

#include "03_shared_memory/kernels/tma_ptx.cuh"
#include "common/cuda_check.hpp"
#include "common/occupancy.cuh"

namespace cml::tma {
namespace {

// ---- 1D bulk copy -----------------------------------------------------------------------------------
// Item i is the i-th chunk of the buffer.
struct BulkJob {
  const unsigned char* in;
  unsigned char* out;
  std::size_t bulk_bytes;  // a multiple of 16: what the bulk copies move
  unsigned chunk;          // bytes per request (a multiple of 16)
  __device__ std::size_t offset(unsigned item) const { return std::size_t{item} * chunk; }
  __device__ unsigned requests() const { return static_cast<unsigned>((bulk_bytes + chunk - 1) / chunk); }
  __device__ std::uint32_t bytes(unsigned item) const {
    const std::size_t left = bulk_bytes - offset(item);
    return static_cast<std::uint32_t>(left < chunk ? left : chunk);
  }
  __device__ void load(unsigned item, unsigned char* stage, std::uint64_t* bar) const {
    mbarrier_arrive_expect_tx(bar, bytes(item));
    bulk_load(stage, in + offset(item), bytes(item), bar);
  }
  __device__ void store(unsigned item, unsigned char* stage) const {
    bulk_store(out + offset(item), stage, bytes(item));
  }
};

// The last total % 16 bytes cannot be a 16-byte copy: the first block's lanes copy them, after the ring.
// (Before the ring, the branch would leave ptxas unsure that only thread 0 runs the ring, and it would turn
// each ticket's atomic into a warp-wide one whose answer is shuffled to the lanes at once: a wait for L2.)
__device__ __forceinline__ void copy_tail(const unsigned char* in, unsigned char* out, std::size_t total_bytes,
                                          std::size_t bulk_bytes) {
  if (blockIdx.x == 0 && threadIdx.x < total_bytes - bulk_bytes)
    out[bulk_bytes + threadIdx.x] = in[bulk_bytes + threadIdx.x];
}

template <Schedule kSchedule>
__global__ void __launch_bounds__(32)
    tma_bulk_copy_kernel(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                         std::size_t total_bytes, unsigned chunk, unsigned stages, unsigned per_ticket,
                         WorkCounter* q) {
#if CML_TMA_DEVICE
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[kMaxStages];
  __shared__ unsigned item_of[kMaxStages];
  unsigned char* ring = align_up<128>(smem_raw);
  const BulkJob job{in, out, total_bytes / 16 * 16, chunk};
  init_barriers(full, stages);
  if (threadIdx.x == 0) {
    ItemSource<kSchedule> source{q, job.requests(), per_ticket};
    drive_ring(job, source, ring, chunk, stages, full, item_of);
  }
  copy_tail(in, out, total_bytes, job.bulk_bytes);
#else
  (void)in, (void)out, (void)total_bytes, (void)chunk, (void)stages, (void)per_ticket, (void)q;
  __trap();
#endif
}

// ---- 1D bulk copy, one request per block -------------------------------------------------------------
// No ring and no tickets: block b copies request b and exits, and the SM starts the next waiting block as
// soon as one leaves, so the block scheduler hands out the requests in order, as the tickets do. What is
// left to choose is how many blocks an SM holds at once, that is how many bytes each SM keeps in flight
// (the launcher caps it by reserving shared memory that the blocks never touch).
__global__ void __launch_bounds__(32)
    tma_bulk_grid_kernel(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                         std::size_t total_bytes, unsigned chunk) {
#if CML_TMA_DEVICE
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full;
  unsigned char* stage = align_up<128>(smem_raw);
  const BulkJob job{in, out, total_bytes / 16 * 16, chunk};
  init_barriers(&full, 1);
  if (threadIdx.x == 0 && blockIdx.x < job.requests()) {
    job.load(blockIdx.x, stage, &full);
    mbarrier_wait(&full, 0);
    job.store(blockIdx.x, stage);
    bulk_commit();
    bulk_wait_read<0>();  // the stage belongs to the next block on this SM once this one exits
  }
  copy_tail(in, out, total_bytes, job.bulk_bytes);
#else
  (void)in, (void)out, (void)total_bytes, (void)chunk;
  __trap();
#endif
}

// ---- The same ring without the TMA ------------------------------------------------------------------
// The bulk copy's ring, requests and tickets, but the block's threads move the bytes: each fills its share of
// a stage with 16-byte cp.async copies, the stage's mbarrier counts one arrival per thread once its copies
// have landed, and then the threads store the stage with 16-byte stores. Where this and the bulk copy run
// at the same speed, the TMA saves threads and instructions, not bandwidth, and what both lose to a copy
// kernel is the trip through shared memory, not the TMA.
inline constexpr unsigned kCpAsyncThreads = 256;

__global__ void __launch_bounds__(kCpAsyncThreads)
    cp_async_ring_copy_kernel(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                              std::size_t total_bytes, unsigned chunk, unsigned stages, unsigned per_ticket,
                              WorkCounter* q) {
#if CML_TMA_DEVICE
  constexpr unsigned kNone = ~0u;
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[kMaxStages];
  __shared__ unsigned item_of[kMaxStages];
  unsigned char* ring = align_up<128>(smem_raw);
  const BulkJob job{in, out, total_bytes / 16 * 16, chunk};
  // Every thread's share of a stage: 16-byte pieces t, t + blockDim.x, ...
  const auto fill = [&](unsigned item, unsigned s) {
    unsigned char* stage = ring + std::size_t{s} * chunk;
    const unsigned char* src = in + job.offset(item);
    for (unsigned i = 16 * threadIdx.x; i < job.bytes(item); i += 16 * blockDim.x) cp_async_16(stage + i, src + i);
    cp_async_arrive(&full[s]);
  };
  ItemSource<Schedule::kTickets> source{q, job.requests(), per_ticket};
  init_barriers(full, stages, blockDim.x);  // one arrival per thread: its own copies into the stage landed
  if (threadIdx.x == 0) {
    source.start(stages);
    for (unsigned s = 0; s < stages; ++s) {
      unsigned item = kNone;  // take() leaves it so when no item is left
      source.take(item);
      item_of[s] = item;
    }
  }
  __syncthreads();  // the first items known to every thread
  for (unsigned s = 0; s < stages && item_of[s] != kNone; ++s) fill(item_of[s], s);
  for (unsigned k = 0;; ++k) {
    const unsigned s = k % stages;
    const unsigned item = item_of[s];
    if (item == kNone) break;  // items are taken in order: no later stage holds one either
    mbarrier_wait(&full[s], (k / stages) & 1u);
    const unsigned char* stage = ring + std::size_t{s} * chunk;
    unsigned char* dst = out + job.offset(item);
    for (unsigned i = 16 * threadIdx.x; i < job.bytes(item); i += 16 * blockDim.x)
      *reinterpret_cast<uint4*>(dst + i) = *reinterpret_cast<const uint4*>(stage + i);
    __syncthreads();  // every thread has read stage s: it may be refilled
    if (threadIdx.x == 0) {
      unsigned next = kNone;
      source.take(next);
      item_of[s] = next;
    }
    __syncthreads();  // the stage's next item known to every thread
    if (item_of[s] != kNone) fill(item_of[s], s);
  }
  if (threadIdx.x == 0) source.finish();
  copy_tail(in, out, total_bytes, job.bulk_bytes);
#else
  (void)in, (void)out, (void)total_bytes, (void)chunk, (void)stages, (void)per_ticket, (void)q;
  __trap();
#endif
}

// ---- 2D tensor copy ---------------------------------------------------------------------------------
// The buffer seen as a rows x kTensorCopyCols matrix of floats, moved in kTensorBox x kTensorBox boxes;
// the floats after the last whole row are copied by the first block's threads. Item i is box i in row-major
// order of boxes.
inline constexpr unsigned kTensorCopyCols = 4096;
inline constexpr unsigned kTensorBox = 64;  // 64 x 64 floats = 16 KiB per box
inline constexpr unsigned kTensorBoxBytes = kTensorBox * kTensorBox * sizeof(float);
inline constexpr unsigned kTensorCopyThreads = 128;

struct TensorJob {
  const CUtensorMap* in_map;
  const CUtensorMap* out_map;
  unsigned boxes_x;
  __device__ void load(unsigned box, unsigned char* stage, std::uint64_t* bar) const {
    mbarrier_arrive_expect_tx(bar, kTensorBoxBytes);  // a box always lands whole (zero-filled past the edge)
    tensor_load_2d(stage, in_map, int(box % boxes_x * kTensorBox), int(box / boxes_x * kTensorBox), bar);
  }
  __device__ void store(unsigned box, unsigned char* stage) const {
    tensor_store_2d(out_map, int(box % boxes_x * kTensorBox), int(box / boxes_x * kTensorBox), stage);
  }
};

__global__ void __launch_bounds__(kTensorCopyThreads)
    tma_tensor_copy_kernel(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map,
                           const float* __restrict__ in, float* __restrict__ out, std::size_t n, unsigned rows,
                           unsigned stages, WorkCounter* q) {
#if CML_TMA_DEVICE
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[kMaxStages];
  __shared__ unsigned item_of[kMaxStages];
  unsigned char* ring = align_up<128>(smem_raw);
  const std::size_t body = std::size_t{rows} * kTensorCopyCols;
  if (blockIdx.x == 0)
    for (std::size_t i = body + threadIdx.x; i < n; i += blockDim.x) out[i] = in[i];
  const unsigned boxes_x = kTensorCopyCols / kTensorBox;
  const unsigned boxes = boxes_x * ((rows + kTensorBox - 1) / kTensorBox);
  init_barriers(full, stages);
  if (threadIdx.x == 0) {
    ItemSource<Schedule::kTickets> source{q, boxes};
    drive_ring(TensorJob{&in_map, &out_map, boxes_x}, source, ring, kTensorBoxBytes, stages, full, item_of);
  }
#else
  (void)in_map, (void)out_map, (void)in, (void)out, (void)n, (void)rows, (void)stages, (void)q;
  __trap();
#endif
}

// ---- Host side --------------------------------------------------------------------------------------

// Shared memory per block of the copy kernels: a ring of this many bytes, cut into stages of one request.
inline constexpr unsigned kRingBytes = 64 * 1024;
// Bytes of requests a bulk copy's ticket stands for.
inline constexpr unsigned kTicketBytes = 16 * 1024;

// How a bulk copy with `chunk`-byte requests is laid out: stages in the ring, bytes of dynamic smem.
struct BulkPlan {
  unsigned stages = 0;
  std::size_t smem = 0;
  unsigned per_ticket = 1;  // requests per ticket: 16 KiB of them, so small requests do not wait on tickets
};
// A ring needs two stages, one landing while the other is stored: "" when requests of `bytes` fit kRingBytes
// twice, else the reason (kRingBytes is a constant to experiment with, and a smaller ring cannot take them).
inline std::string ring_request_unsupported(unsigned bytes) {
  if (bytes <= kRingBytes / 2) return "";
  return "a ring of " + std::to_string(kRingBytes) + " bytes (kRingBytes) cannot hold two " + std::to_string(bytes) +
         "-byte requests";
}

inline BulkPlan bulk_plan(unsigned chunk) {
  if (chunk < 16 || chunk % 16 != 0) throw std::invalid_argument("a bulk request must be a multiple of 16 bytes");
  if (const std::string why = ring_request_unsupported(chunk); !why.empty()) throw std::invalid_argument(why);
  BulkPlan p;
  p.stages = std::min(kRingBytes / chunk, kMaxStages);
  p.smem = std::size_t{p.stages} * chunk + 128;  // + alignment
  p.per_ticket = std::max(1u, kTicketBytes / chunk);
  return p;
}

// What both 1D ring copies launch: a kernel of tma_bulk_copy_kernel's parameters.
using RingCopyKernel = void (*)(const unsigned char*, unsigned char*, std::size_t, unsigned, unsigned, unsigned,
                                WorkCounter*);

// Copies `bytes` from `in` to `out` (both 16-byte aligned) in `chunk`-byte requests through `kernel`, blocks of
// `threads`, with the ticket counter of `queue` on stream `s`. Persistent grid of one block per SM: one ring per
// SM keeps enough bytes in flight, and more rings only spread the requests in flight over more of memory.
// `max_blocks` > 0 caps the grid (the tests use it to make each block go round its ring many times).
inline void launch_ring_copy(RingCopyKernel kernel, unsigned threads, Queue queue, const std::string& what,
                             const void* in, void* out, std::size_t bytes, unsigned chunk, cudaStream_t s,
                             unsigned max_blocks) {
  if (bytes == 0) return;
  if (reinterpret_cast<std::uintptr_t>(in) % 16 != 0 || reinterpret_cast<std::uintptr_t>(out) % 16 != 0)
    throw std::invalid_argument(what + " copies need 16-byte aligned buffers");
  const BulkPlan p = bulk_plan(chunk);
  const std::size_t chunks = bytes / 16 * 16 / chunk + 1;
  if (chunks >= (std::size_t{1} << 31)) throw std::invalid_argument(what + " copy: 2^31 requests or more");
  unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(residency(kernel, int(threads), p.smem).sms, chunks));
  if (max_blocks > 0) blocks = std::min(blocks, max_blocks);
  kernel<<<blocks, threads, p.smem, s>>>(static_cast<const unsigned char*>(in), static_cast<unsigned char*>(out),
                                         bytes, chunk, p.stages, p.per_ticket, work_counter(queue, s));
  CUDA_CHECK_LAUNCH();
}

// 1D bulk copies of `chunk` bytes, issued by the first thread of one-warp blocks; `schedule` hands out the requests.
inline void launch_tma_bulk_copy(const void* in, void* out, std::size_t bytes, unsigned chunk, cudaStream_t s,
                                 unsigned max_blocks = 0, Schedule schedule = Schedule::kTickets) {
  const RingCopyKernel kernel = schedule == Schedule::kStatic ? tma_bulk_copy_kernel<Schedule::kStatic>
                                                              : tma_bulk_copy_kernel<Schedule::kTickets>;
  launch_ring_copy(kernel, 32, kBulkQueue, "bulk", in, out, bytes, chunk, s, max_blocks);
}

// The same copy through the same ring, its bytes moved by kCpAsyncThreads threads per block with cp.async
// instead of the TMA (cp_async_ring_copy_kernel).
inline void launch_cp_async_ring_copy(const void* in, void* out, std::size_t bytes, unsigned chunk, cudaStream_t s,
                                      unsigned max_blocks = 0) {
  launch_ring_copy(cp_async_ring_copy_kernel, kCpAsyncThreads, kCpAsyncQueue, "cp.async", in, out, bytes, chunk, s,
                   max_blocks);
}

// Blocks of one 16 KiB request each that an SM holds at once in bulk_16k_grid: 48 KiB in flight per SM.
// More blocks keep more requests in flight, spread over more of memory, and copy slower (bulk_16k_grid_full);
// fewer leave DRAM waiting. A constant to experiment with.
inline constexpr unsigned kGridBlocksPerSm = 3;

// The dynamic shared memory of tma_bulk_grid_kernel's blocks for `chunk`-byte requests and at most `per_sm`
// blocks per SM (0: no cap), asked once per device and shape: the stage, and above it what shared_reserve_for
// reserves. The kernel asks for the largest shared memory, so that the SM's split between shared memory and L1
// cannot lower the cap further; residency() says how many fit.
inline std::size_t bulk_grid_smem(unsigned chunk, unsigned per_sm) {
  static std::map<std::tuple<int, unsigned, unsigned>, std::size_t> known;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const auto key = std::make_tuple(device, chunk, per_sm);
  if (const auto it = known.find(key); it != known.end()) return it->second;
  CUDA_CHECK(cudaFuncSetAttribute(tma_bulk_grid_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  int(cudaSharedmemCarveoutMaxShared)));
  const std::size_t stage = std::size_t{chunk} + 128;  // + alignment
  const std::size_t smem = per_sm == 0 ? stage : shared_reserve_for(tma_bulk_grid_kernel, 32, int(per_sm), stage);
  (void)residency(tma_bulk_grid_kernel, 32, smem);  // raises the kernel's limit; throws without the TMA
  return known[key] = smem;
}

// 1D bulk copies of `chunk` bytes, one per one-warp block, at most `per_sm` blocks per SM (0: as many as fit).
inline void launch_tma_bulk_grid_copy(const void* in, void* out, std::size_t bytes, unsigned chunk, cudaStream_t s,
                                      unsigned per_sm = kGridBlocksPerSm) {
  if (bytes == 0) return;
  if (reinterpret_cast<std::uintptr_t>(in) % 16 != 0 || reinterpret_cast<std::uintptr_t>(out) % 16 != 0)
    throw std::invalid_argument("bulk copies need 16-byte aligned buffers");
  if (chunk < 16 || chunk % 16 != 0) throw std::invalid_argument("a bulk request must be a multiple of 16 bytes");
  const std::size_t requests = std::max<std::size_t>(1, (bytes / 16 * 16 + chunk - 1) / chunk);
  if (requests >= (std::size_t{1} << 31)) throw std::invalid_argument("bulk grid copy: 2^31 requests or more");
  const std::size_t smem = bulk_grid_smem(chunk, per_sm);
  tma_bulk_grid_kernel<<<static_cast<unsigned>(requests), 32, smem, s>>>(
      static_cast<const unsigned char*>(in), static_cast<unsigned char*>(out), bytes, chunk);
  CUDA_CHECK_LAUNCH();
}

// Copies n floats with 64 x 64 tensor boxes of the buffer seen as a matrix of kTensorCopyCols columns.
inline void launch_tma_tensor_copy(const float* in, float* out, std::size_t n, cudaStream_t s, unsigned max_blocks = 0) {
  if (n == 0) return;
  const std::size_t rows = n / kTensorCopyCols;
  if (rows >= (std::size_t{1} << 31)) throw std::invalid_argument("tensor copy: too many rows");
  static MapPair maps;
  if (rows > 0 && !maps.matches(in, out, rows, kTensorCopyCols)) {
    maps.in_map = float_matrix_map(in, rows, kTensorCopyCols, kTensorBox, kTensorBox, CU_TENSOR_MAP_SWIZZLE_NONE);
    maps.out_map = float_matrix_map(out, rows, kTensorCopyCols, kTensorBox, kTensorBox, CU_TENSOR_MAP_SWIZZLE_NONE);
    maps.in = in, maps.out = out, maps.rows = rows, maps.cols = kTensorCopyCols;
  }
  if (const std::string why = ring_request_unsupported(kTensorBoxBytes); !why.empty()) throw std::invalid_argument(why);
  const unsigned stages = kRingBytes / kTensorBoxBytes;
  const std::size_t smem = std::size_t{kRingBytes} + 128;
  const std::size_t boxes = (kTensorCopyCols / kTensorBox) * ((rows + kTensorBox - 1) / kTensorBox);
  const auto kernel = tma_tensor_copy_kernel;
  unsigned blocks = static_cast<unsigned>(
      std::clamp<std::size_t>(boxes, 1, residency(kernel, kTensorCopyThreads, smem).sms));  // one ring per SM
  if (max_blocks > 0) blocks = std::min(blocks, max_blocks);
  // With no whole row there is no tensor: the maps are never read, and block 0 copies everything.
  kernel<<<blocks, kTensorCopyThreads, smem, s>>>(maps.in_map, maps.out_map, in, out, n, unsigned(rows), stages,
                                                  work_counter(kTensorQueue, s));
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::tma
