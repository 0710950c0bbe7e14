// The Tensor Memory Accelerator (TMA, compute capability 9.0 and newer): one thread asks a copy engine
// beside the SM to move a whole block of bytes between global and shared memory, and an mbarrier in shared
// memory counts the bytes as they land. No thread holds the data in registers, and one instruction moves
// up to a whole tile.
//
// - 1D bulk copies (cp.async.bulk): a contiguous run of bytes, 16-byte aligned, a multiple of 16 long.
// - Tensor copies (cp.async.bulk.tensor): a box of a 2D array described by a tensor map (a 128-byte
//   descriptor made on the host with cuTensorMapEncodeTiled); out-of-range parts of a box are filled with
//   zeros on loads and dropped on stores, and the box can land in shared memory swizzled.
//
// The instructions are written as inline PTX, so the same source builds with the CUDA 12 and 13 toolkits.
// Every kernel here is compiled to a trap for older architectures and never launched there: the launchers
// check the device first (tma_unsupported).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "common/cuda_check.hpp"
#include "common/device_info.hpp"
#include "common/driver_api.hpp"
#include "common/occupancy.cuh"
#include "common/transpose.cuh"

namespace cml::tma {

// "" when a device of compute capability major.minor has the TMA, else the reason.
inline std::string tma_unsupported(int major, int minor) {
  if (major >= 9) return "";
  return "the Tensor Memory Accelerator needs compute capability 9.0 or newer; this GPU is " +
         std::to_string(major) + "." + std::to_string(minor);
}

inline std::string tma_unsupported() {
  const ComputeCapability cc = current_compute_capability();
  return tma_unsupported(cc.major, cc.minor);
}

// ---- Shapes and layouts (host and device) ----------------------------------------------------------

// A kSide x kSide float tile as the TMA writes it into shared memory: kSide rows of 4 kSide bytes, one
// after another. Element (r, c) is word kSide r + c: with kSide a multiple of 32, bank c % 32, so a tile
// COLUMN is one bank. The TMA cannot pad rows (+1 word per row, the classic fix): it writes dense boxes.
template <int kSide>
__host__ __device__ constexpr int tile_word(int r, int c) {
  return r * kSide + c;
}

// The TMA transpose: each block streams kSide x kSide tiles (one tensor load and one tensor store each)
// through kStages input stages and kOut output buffers; 256 threads move each tile as 4 x 4 blocks.
inline constexpr int kTmaThreads = 256;
template <int kSide, int kStages, int kOut>
struct TmaTransposeShape {
  static_assert(kSide == 64 || kSide == 128, "a tile row is whole 256- or 512-byte pieces; a box side is <= 256");
  static constexpr unsigned tile_bytes = kSide * kSide * sizeof(float);
  static constexpr unsigned smem_bytes = (kStages + kOut) * tile_bytes + 128;  // + alignment
};

// Which 4 x 4 block of a kSide x kSide tile is block number b (0 .. (kSide / 4)^2 - 1; thread t moves
// blocks t, t + 256, ...): block row rb (tile rows 4 rb .. 4 rb + 3) and block column q (tile columns
// 4 q .. 4 q + 3). 16-byte accesses are served eight lanes (a quarter warp) at a time, and eight float4s
// are conflict-free when they sit in eight different 16-byte bank groups, i.e. eight different values of
// the 16-byte column modulo 8. Lane j of a quarter takes block row j (+ 8 n) and block column j ^ m (+ 8 n'),
// with m and the n's fixed across the quarter: its float4 reads (input rows 4 rb + i, column q) and its
// float4 writes (output rows 4 q + i, column rb) fall in eight different bank groups. The XOR swizzles
// which thread takes which block, where tiled_swizzled swizzles where an element is stored: with the TMA
// the layout is the TMA's, so the threads move instead.
struct Block4 {
  int rb = 0, q = 0;
};
template <int kSide>
__host__ __device__ constexpr Block4 block4_of(int b) {
  constexpr int kBands = kSide / 32;  // groups of 8 block rows
  const int j = b % 8, d = b / 8;
  return {j + 8 * (d % kBands), (j ^ (d / kBands % 8)) + 8 * (d / (8 * kBands))};
}

// The tensor map constraints the TMA transpose needs: every row of the input and of the output starts
// 16 bytes after a 16-byte boundary, i.e. both sides a multiple of 4 floats, and sides below 2^31.
inline std::string transpose_tma_shape_unsupported(std::size_t rows, std::size_t cols) {
  if (rows % 4 != 0 || cols % 4 != 0)
    return "tensor maps need rows of a multiple of 16 bytes: both sides must be multiples of 4 floats";
  if (rows >= (std::size_t{1} << 31) || cols >= (std::size_t{1} << 31)) return "a side is 2^31 or more";
  return "";
}

// ---- Inline PTX (sm_90 and newer) -------------------------------------------------------------------
namespace {

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define CML_TMA_DEVICE 1
#else
#define CML_TMA_DEVICE 0
#endif

__device__ __forceinline__ std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, unsigned arrivals) {
#if CML_TMA_DEVICE
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_address(bar)), "r"(arrivals) : "memory");
#endif
}

// Makes initialised mbarriers visible to the async proxy (the TMA unit) before any copy signals them.
__device__ __forceinline__ void fence_mbarrier_init() {
#if CML_TMA_DEVICE
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

// Orders this thread's ordinary shared-memory writes before later TMA reads of the same bytes.
__device__ __forceinline__ void fence_proxy_async_shared() {
#if CML_TMA_DEVICE
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

// One arrival, and `bytes` more to land before the barrier's phase can complete.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
#if CML_TMA_DEVICE
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)), "r"(bytes)
               : "memory");
#endif
}

__device__ __forceinline__ bool mbarrier_try_wait(std::uint64_t* bar, std::uint32_t parity) {
  std::uint32_t done = 0;
#if CML_TMA_DEVICE
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
      : "=r"(done)
      : "r"(smem_address(bar)), "r"(parity)
      : "memory");
#endif
  return done != 0;
}

// Waits until the phase with this parity has completed (all arrivals made, all expected bytes landed).
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* bar, std::uint32_t parity) {
  while (!mbarrier_try_wait(bar, parity)) {
  }
}

// `bytes` (a multiple of 16) from global `src` to shared `dst`, counted on `bar` as they land.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, std::uint32_t bytes, std::uint64_t* bar) {
#if CML_TMA_DEVICE
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_address(dst)),
               "l"(src), "r"(bytes), "r"(smem_address(bar))
               : "memory");
#endif
}

// `bytes` from shared `src` to global `dst`, in the thread's current bulk group.
__device__ __forceinline__ void bulk_store(void* dst, const void* src, std::uint32_t bytes) {
#if CML_TMA_DEVICE
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(smem_address(src)),
               "r"(bytes)
               : "memory");
#endif
}

// The box at (x, y) (x along the contiguous dimension) of the tensor `map` into shared `dst`.
__device__ __forceinline__ void tensor_load_2d(void* dst, const CUtensorMap* map, int x, int y, std::uint64_t* bar) {
#if CML_TMA_DEVICE
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::
          "r"(smem_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(smem_address(bar))
      : "memory");
#endif
}

// Shared `src` to the box at (x, y) of `map`, in the thread's current bulk group.
__device__ __forceinline__ void tensor_store_2d(const CUtensorMap* map, int x, int y, const void* src) {
#if CML_TMA_DEVICE
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(x), "r"(y), "r"(smem_address(src))
               : "memory");
#endif
}

// Closes the current bulk group of stores.
__device__ __forceinline__ void bulk_commit() {
#if CML_TMA_DEVICE
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#endif
}

// Waits until all but the newest kPending bulk groups have finished READING their shared memory (the
// buffer may be refilled; the global writes may still be on their way).
template <int kPending>
__device__ __forceinline__ void bulk_wait_read() {
#if CML_TMA_DEVICE
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(kPending) : "memory");
#endif
}

// Waits until every bulk group is complete, writes included.
__device__ __forceinline__ void bulk_wait_all() {
#if CML_TMA_DEVICE
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

// 16 bytes from global `src` to shared `dst` by this thread, bypassing L1 (cp.async.cg): the thread issues the
// copy and goes on; the bytes land later, without passing through its registers. (Not the TMA: compute
// capability 8.0 has it; here it is the TMA ring's comparison.)
__device__ __forceinline__ void cp_async_16(void* dst, const void* src) {
#if CML_TMA_DEVICE
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_address(dst)), "l"(src) : "memory");
#endif
}

// One arrival on `bar` once every cp.async this thread has issued so far has landed. With .noinc the
// arrival is one of those the barrier was initialised to expect, as a plain arrive would be.
__device__ __forceinline__ void cp_async_arrive(std::uint64_t* bar) {
#if CML_TMA_DEVICE
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_address(bar)) : "memory");
#endif
}

// The first kAlign-aligned byte at or after p. It moves p by an offset rather than rebuilding a pointer from
// an integer: the result then still points into shared memory as far as the compiler can tell, so the TMA
// transpose's reads and writes of its tiles compile to LDS.128 and STS.128. Rebuilt from an integer, the
// pointer is generic: every access becomes a generic LD.E.128 or ST.E.128, which must first find out which
// memory the address lies in, and ptxas also spilled registers to local memory. DRAM sets the pace of these
// kernels, so the time does not show the difference; the machine code does (tests/sass/transpose_shared.txt).
template <unsigned kAlign>
__device__ __forceinline__ unsigned char* align_up(unsigned char* p) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
  return p + (kAlign - a % kAlign) % kAlign;
}

// ---- Which block takes which item: a static split or tickets -----------------------------------------
// A persistent grid that splits its items in advance (block b takes b, b + gridDim.x, ...) finishes when
// its slowest block does. At 8x L2 the SMs do not stream at one rate, and the fastest sit idle for the
// last several percent of the run. With tickets, a block takes the next unclaimed item from a counter in
// global memory whenever a stage of its ring comes free, so every block works until the items run out, and
// the items in flight across the GPU stay neighbours in memory.
enum class Schedule {
  kStatic,   // block b takes items b, b + gridDim.x, ...
  kTickets,  // each block takes the next item from a global counter
};

// A counter starts at 0 and the last block of a launch puts it back to 0, so no launch needs a memset in
// front of it (which would sit in the timed stream). Two grids that take tickets from one counter at the
// same time would each skip the items the other took, so a counter belongs to one kernel family and one
// stream: launches on one stream run one after the other, and launches on different streams may overlap.
struct WorkCounter {
  unsigned next;      // the next item not yet taken
  unsigned finished;  // blocks of this launch done taking items
};
enum Queue : unsigned { kBulkQueue, kTensorQueue, kTransposeQueue, kCpAsyncQueue, kQueues };
inline constexpr unsigned kCounterSlots = 64;  // streams per device that may launch each family
__device__ WorkCounter g_work[kQueues * kCounterSlots];

// Thread 0 of every block calls this once, after its last ticket: the last block to arrive resets the
// counter. The fences order each block's tickets before its arrival, and the arrivals before the reset.
__device__ __forceinline__ void finish_tickets(WorkCounter* q) {
  __threadfence();
  if (atomicAdd(&q->finished, 1u) == gridDim.x - 1) {
    __threadfence();
    q->next = 0;
    q->finished = 0;
  }
}

// Hands out the items of one block, one at a time, for the thread that issues its loads. With tickets, the
// ring's first fill needs no ticket: block b takes items b * batch .. b * batch + batch - 1, so its loads
// start at once. After that, ticket t is the `per_ticket` items from gridDim.x * batch + t * per_ticket on
// (several small requests per ticket keep the tickets rarer than the requests). Each ticket is asked for
// as soon as the previous one is opened, so its round trip to L2 overlaps the work on the items in hand.
template <Schedule kSchedule>
struct ItemSource {
  WorkCounter* q;
  unsigned items;
  unsigned per_ticket = 1;
  unsigned next = 0;   // the next item to hand out
  unsigned left = 0;   // static: items still to hand out; tickets: items left in the group in hand
  unsigned first = 0;  // tickets: items of the grid's first fill, gridDim.x * batch
  unsigned ticket = 0;  // tickets: the counter's answer to the last ask (it may still be on its way)
  bool done = false;
  // The answer is used only when the items in hand run out: the thread does not wait for it here, as it
  // would if it computed the group's first item at once.
  __device__ void ask() { ticket = atomicAdd(&q->next, 1u); }
  __device__ void start(unsigned batch) {
    if constexpr (kSchedule == Schedule::kStatic) {
      (void)batch;
      next = blockIdx.x;
      left = blockIdx.x < items ? (items - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    } else {
      next = blockIdx.x * batch;
      left = batch;
      first = gridDim.x * batch;
      ask();
    }
  }
  // The next item, or false when there are none left.
  __device__ bool take(unsigned& item) {
    if constexpr (kSchedule == Schedule::kStatic) {
      if (left == 0) return false;
      item = next;
      next += gridDim.x, --left;
      return true;
    } else {
      if (done) return false;
      if (left == 0) {
        next = first + ticket * per_ticket, left = per_ticket;
        ask();
      }
      if (next >= items) {
        done = true;  // items are handed out in increasing order: every later one is past the end too
        return false;
      }
      item = next++;
      --left;
      return true;
    }
  }
  __device__ void finish() {
    if constexpr (kSchedule == Schedule::kTickets) finish_tickets(q);
  }
};

// ---- The ring every copy kernel streams through ---------------------------------------------------
// One thread keeps `stages` loads in flight: it waits for the k-th item it loaded to land, stores it from
// the same stage, and once the store of the item before has finished reading its stage, refills that
// stage with the next item from `source`. No other thread touches the data. `job` knows what an item is:
//   job.load(item, stage, bar)   issues the load of the item (expect_tx included)
//   job.store(item, stage)       issues its store
// item_of[s] remembers which item stage s holds.
inline constexpr unsigned kMaxStages = 256;

// [doc:drive_ring]
template <class Job, class Source>
__device__ __forceinline__ void drive_ring(const Job& job, Source& source, unsigned char* ring, unsigned stage_bytes,
                                           unsigned stages, std::uint64_t* full, unsigned* item_of) {
  unsigned loaded = 0, item = 0;
  source.start(stages);
  while (loaded < stages && source.take(item)) {
    item_of[loaded] = item;
    job.load(item, ring + std::size_t{loaded} * stage_bytes, &full[loaded]);
    ++loaded;
  }
  for (unsigned k = 0; k < loaded; ++k) {
    const unsigned s = k % stages;
    mbarrier_wait(&full[s], (k / stages) & 1u);
    job.store(item_of[s], ring + std::size_t{s} * stage_bytes);
    bulk_commit();
    // Load number k - 1 + stages goes where item k - 1 was, once its store has read the stage. (Only a
    // full ring refills: a ring that never filled has no items left.)
    if (k >= 1 && loaded == k - 1 + stages && source.take(item)) {
      bulk_wait_read<1>();
      const unsigned ps = (k - 1) % stages;
      item_of[ps] = item;
      job.load(item, ring + std::size_t{ps} * stage_bytes, &full[ps]);
      ++loaded;
    }
  }
  bulk_wait_all();  // the shared memory must outlive the stores that read it
  source.finish();
}
// [/doc:drive_ring]

// Initialises `count` barriers of `arrivals` arrivals each and makes them visible to the TMA unit and the block.
__device__ __forceinline__ void init_barriers(std::uint64_t* full, unsigned count, unsigned arrivals = 1) {
  if (threadIdx.x == 0) {
    for (unsigned s = 0; s < count; ++s) mbarrier_init(&full[s], arrivals);
    fence_mbarrier_init();
  }
  __syncthreads();
}

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

// ---- TMA transpose ----------------------------------------------------------------------------------
// Per tile: one tensor load brings it into a stage; the block's threads read it as 4 x 4 blocks (four float4
// reads each), transpose each block in registers, and write it (four float4 writes) into an output buffer,
// which one tensor store sends to the output.
template <int kSide>
__device__ __forceinline__ void transpose_tile_blocks(const float* in_tile, float* out_tile) {
#pragma unroll
  for (int p = 0; p < kSide * kSide / 16 / kTmaThreads; ++p) {
    const Block4 b = block4_of<kSide>(int(threadIdx.x) + p * kTmaThreads);
    float4 a[4];  // a[i] = tile row 4 rb + i, columns 4 q .. 4 q + 3
#pragma unroll
    for (int i = 0; i < 4; ++i)
      a[i] = *reinterpret_cast<const float4*>(&in_tile[tile_word<kSide>(4 * b.rb + i, 4 * b.q)]);
    // Output row 4 q + m is input column 4 q + m: its columns 4 rb .. 4 rb + 3 are component m of a[0..3].
    float* o = &out_tile[tile_word<kSide>(4 * b.q, 4 * b.rb)];
    *reinterpret_cast<float4*>(o) = make_float4(a[0].x, a[1].x, a[2].x, a[3].x);
    *reinterpret_cast<float4*>(o + kSide) = make_float4(a[0].y, a[1].y, a[2].y, a[3].y);
    *reinterpret_cast<float4*>(o + 2 * kSide) = make_float4(a[0].z, a[1].z, a[2].z, a[3].z);
    *reinterpret_cast<float4*>(o + 3 * kSide) = make_float4(a[0].w, a[1].w, a[2].w, a[3].w);
  }
}

// Persistent blocks; item i is tile tile_of<kOrder>(i), and `kSchedule` says which items a block takes.
// Thread 0 keeps kStages tile loads in flight and issues the stores; the output buffer of a block's k-th
// tile is refilled only once the store of its tile k - kOut has read it. tile_in[s] tells every thread
// which tile stage s holds, or that there are none left.
template <int kSide, int kStages, int kOut, transpose::BlockOrder kOrder, Schedule kSchedule = Schedule::kTickets>
__global__ void __launch_bounds__(kTmaThreads)
    transpose_tma_kernel(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map,
                         transpose::TileGrid tiles, WorkCounter* q) {
#if CML_TMA_DEVICE
  using Shape = TmaTransposeShape<kSide, kStages, kOut>;
  constexpr int kTileFloats = kSide * kSide;
  constexpr unsigned kNone = ~0u;
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[kStages];
  __shared__ unsigned tile_in[kStages];
  float* const base = reinterpret_cast<float*>(align_up<128>(smem_raw));
  const auto stage = [&](unsigned k) { return base + (k % kStages) * kTileFloats; };
  const auto out_buffer = [&](unsigned k) { return base + (kStages + k % kOut) * kTileFloats; };
  ItemSource<kSchedule> source{q, tiles.blocks()};
  // Thread 0: the block's k-th tile, or kNone, into stage k % kStages.
  const auto load = [&](unsigned k) {
    unsigned item = kNone;
    if (source.take(item)) {
      const transpose::TileIndex t = transpose::tile_of<kOrder>(item, tiles.tiles_x, tiles.tiles_y);
      std::uint64_t* bar = &full[k % kStages];
      mbarrier_arrive_expect_tx(bar, Shape::tile_bytes);  // a box always lands whole (zeros past the edge)
      tensor_load_2d(stage(k), &in_map, int(t.x) * kSide, int(t.y) * kSide, bar);
    }
    tile_in[k % kStages] = item;
  };
  init_barriers(full, kStages);
  if (threadIdx.x == 0) {
    source.start(kStages);
    for (unsigned k = 0; k < unsigned(kStages); ++k) load(k);
  }
  // [doc:tma_transpose_loop]
  for (unsigned k = 0;; ++k) {
    // All stores but the newest kOut - 1 have read their buffers: out_buffer(k) is free again.
    if (threadIdx.x == 0) bulk_wait_read<kOut - 1>();
    __syncthreads();  // also publishes tile_in[k % kStages]
    const unsigned item = tile_in[k % kStages];
    if (item == kNone) break;
    mbarrier_wait(&full[k % kStages], (k / kStages) & 1u);
    transpose_tile_blocks<kSide>(stage(k), out_buffer(k));
    fence_proxy_async_shared();  // the tensor store below reads what these threads wrote
    __syncthreads();             // the whole tile written; every thread done with stage(k) and tile_in
    if (threadIdx.x == 0) {
      const transpose::TileIndex t = transpose::tile_of<kOrder>(item, tiles.tiles_x, tiles.tiles_y);
      // Input rows r0 .. and columns c0 .. become output rows c0 .. and columns r0 ..; the TMA drops
      // whatever falls outside the output matrix.
      tensor_store_2d(&out_map, int(t.y) * kSide, int(t.x) * kSide, out_buffer(k));
      bulk_commit();
      load(k + kStages);
    }
  }
  // [/doc:tma_transpose_loop]
  if (threadIdx.x == 0) {
    bulk_wait_all();
    source.finish();
  }
#else
  (void)in_map, (void)out_map, (void)tiles, (void)q;
  __trap();
#endif
}

#undef CML_TMA_DEVICE

// ---- Host side --------------------------------------------------------------------------------------

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// A tensor map for a row-major rows x cols float matrix at `base`, moved in box_rows x box_cols boxes.
inline CUtensorMap float_matrix_map(const float* base, std::size_t rows, std::size_t cols, unsigned box_rows,
                                    unsigned box_cols, CUtensorMapSwizzle swizzle) {
  static const EncodeTiled encode = driver_function<EncodeTiled>("cuTensorMapEncodeTiled", 12000);
  if (encode == nullptr) throw std::runtime_error("this driver has no cuTensorMapEncodeTiled");
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols * sizeof(float)};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  CU_CHECK(encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base), dims, strides, box,
                  element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

// How many SMs the current device has and how many blocks of `kernel` fit on one at once with `smem` bytes
// of dynamic shared memory (after allow_most_dynamic_shared raises the kernel's limit); throws where
// the device has no TMA. Asked once per kernel, size and device and remembered: the queries are host work
// that would otherwise sit between the timer's start event and the launch.
struct Residency {
  unsigned sms = 0, per_sm = 0;
};
template <class Kernel>
Residency residency(Kernel kernel, int threads, std::size_t smem) {
  static std::map<std::tuple<const void*, std::size_t, int>, Residency> known;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), smem, device);
  if (const auto it = known.find(key); it != known.end()) return it->second;
  if (const std::string why = tma_unsupported(); !why.empty()) throw std::runtime_error(why);
  int sms = 0, per_sm = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (smem > allow_most_dynamic_shared(kernel)) throw std::runtime_error("a TMA block does not fit on this GPU's SM");
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  if (per_sm < 1) throw std::runtime_error("a TMA block does not fit on this GPU's SM");
  return known[key] = Residency{static_cast<unsigned>(sms), static_cast<unsigned>(per_sm)};
}

// The ticket counter of kernel family `queue` for launches on stream `s` of the current device. Each stream
// gets its own slot the first time it launches a family, for the life of the process. A stream destroyed
// while its copies still run would leave its slot to whatever stream is next created with the same handle:
// cml::Stream waits for its work before it destroys the stream; wait likewise for a stream of your own.
inline WorkCounter* work_counter(Queue queue, cudaStream_t s) {
  static std::mutex m;
  static std::map<std::pair<int, cudaStream_t>, unsigned> slot_of;
  static std::map<int, unsigned> slots_used;
  static std::map<int, WorkCounter*> counters;  // g_work on each device
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(m);
  auto base = counters.find(device);
  if (base == counters.end()) {
    void* p = nullptr;
    CUDA_CHECK(cudaGetSymbolAddress(&p, g_work));
    base = counters.emplace(device, static_cast<WorkCounter*>(p)).first;
  }
  auto slot = slot_of.find({device, s});
  if (slot == slot_of.end()) {
    unsigned& used = slots_used[device];
    if (used == kCounterSlots)
      throw std::runtime_error("TMA copies launched from more than " + std::to_string(kCounterSlots) +
                               " streams of one device: each needs a ticket counter of its own (kCounterSlots)");
    slot = slot_of.emplace(std::make_pair(device, s), used++).first;
  }
  return base->second + std::size_t{queue} * kCounterSlots + slot->second;
}

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

// The last tensor maps made, reused while the buffers and shape stay the same: encoding one is host work
// that would otherwise sit inside every timed launch.
struct MapPair {
  const void* in = nullptr;
  const void* out = nullptr;
  std::size_t rows = 0, cols = 0;
  CUtensorMap in_map{}, out_map{};
  bool matches(const void* i, const void* o, std::size_t r, std::size_t c) const {
    return i == in && o == out && r == rows && c == cols;
  }
};

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

// out (cols x rows) = in^T (in: rows x cols), both sides multiples of 4 (transpose_tma_shape_unsupported).
// Persistent grid of as many blocks as fit at once, taking tiles by `kSchedule`; `max_blocks` > 0 caps it.
template <int kSide, int kStages, int kOut, transpose::BlockOrder kOrder = transpose::BlockOrder::kRowMajor,
          Schedule kSchedule = Schedule::kTickets>
void launch_transpose_tma(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s,
                          unsigned max_blocks = 0) {
  using Shape = TmaTransposeShape<kSide, kStages, kOut>;
  if (rows == 0 || cols == 0) return;
  if (const std::string why = transpose_tma_shape_unsupported(rows, cols); !why.empty())
    throw std::invalid_argument("TMA transpose: " + why);
  static MapPair maps;
  if (!maps.matches(in, out, rows, cols)) {
    maps.in_map = float_matrix_map(in, rows, cols, kSide, kSide, CU_TENSOR_MAP_SWIZZLE_NONE);
    maps.out_map = float_matrix_map(out, cols, rows, kSide, kSide, CU_TENSOR_MAP_SWIZZLE_NONE);
    maps.in = in, maps.out = out, maps.rows = rows, maps.cols = cols;
  }
  const transpose::TileGrid tiles{unsigned((cols + kSide - 1) / kSide), unsigned((rows + kSide - 1) / kSide)};
  const auto kernel = transpose_tma_kernel<kSide, kStages, kOut, kOrder, kSchedule>;
  const Residency r = residency(kernel, kTmaThreads, Shape::smem_bytes);
  unsigned blocks = std::min(tiles.blocks(), r.sms * r.per_sm);
  if (max_blocks > 0) blocks = std::min(blocks, max_blocks);
  kernel<<<blocks, kTmaThreads, Shape::smem_bytes, s>>>(maps.in_map, maps.out_map, tiles,
                                                        work_counter(kTransposeQueue, s));
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::tma
