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
// This header holds what every TMA kernel here builds on: the instructions as inline PTX (so the same source
// builds with the CUDA 12 and 13 toolkits), the schedule that hands items to persistent blocks, the ring that
// keeps loads in flight, and on the host the tensor maps, the residency and the ticket counters. The kernels
// are in tma_copy_kernels.cuh and tma_transpose.cuh; each is compiled to a trap for older architectures and
// never launched there: the launchers check the device first (tma_unsupported).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

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

// 1 where the code compiles for the host or for sm_90 and newer, else 0. It stays defined for the TMA headers
// that include this one: where it is 0, the PTX wrappers are empty and every kernel body is a trap.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define CML_TMA_DEVICE 1
#else
#define CML_TMA_DEVICE 0
#endif

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

// ---- Inline PTX (sm_90 and newer) -------------------------------------------------------------------
namespace {

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

}  // namespace
}  // namespace cml::tma
