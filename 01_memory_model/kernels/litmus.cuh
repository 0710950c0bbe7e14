// Litmus kernels: message passing (MP) and store buffering (SB) between threads of different blocks, many
// independent instances at once, every outcome counted on the device.
//
// Block b (b < grid/2) pairs with block b + grid/2: thread t of the first is thread A of instance
// (b, t), thread t of the second is its thread B. Each instance has its own two locations, each on its own
// 128-byte line (litmus_placement scatters them), and its own two handshake words. Per iteration i both
// threads announce "I am at i" and wait until the partner is there too, then run the test once: the two
// threads of a trial run at the same time (cooperative launch: every block of the grid is resident, so a
// partner always arrives). The last two warps of every block do not test anything: they read a shared
// buffer and write their own lines as fast as they can, so the L1 of each SM keeps evicting and the L2 is
// busy, which is the kind of load under which reordering shows.
//
// The handshake is relaxed on purpose: an acquire would invalidate the L1 and a release would drain the
// stores before it, hiding exactly the reorderings the weak variants may show. Compiler barriers (an empty
// asm with a "memory" clobber) around each trial keep the compiler from hoisting a plain load out of the
// loop or merging stores of two iterations; between the two accesses of a trial there is none, so what the
// compiler may reorder there it may (the chapter README shows what it emits).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cuda/atomic>
#include <stdexcept>
#include <vector>

#include "01_memory_model/kernels/litmus_reference.hpp"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch01 {
namespace {

// Polls of the partner's handshake word before a thread gives up (a defect, never a slow partner: the
// partner is resident and a trial takes microseconds). The run then reports `stuck` instead of hanging.
constexpr unsigned kSpinLimit = 1u << 22;
constexpr unsigned kStressReadLines = 1u << 15;  // 4 MiB shared by every stress warp, only read
constexpr unsigned kStressOwnLines = 64;         // lines each stress warp writes

struct LitmusArgs {
  unsigned* lines;              // 2 * instances lines; instance k uses lines place[2k] and place[2k + 1]
  const std::uint32_t* place;   // litmus_placement()
  unsigned* handshake;          // 2 * instances lines: instance k's A word at line 2k, its B word at 2k + 1
  const unsigned* stress_read;  // kStressReadLines lines
  unsigned* stress_own;         // kStressOwnLines lines per stress warp of the grid
  unsigned long long* counts;   // kOutcomes counters
  unsigned* stuck;              // threads that gave up waiting
  int* sm_of_block;             // the SM each block ran on
  unsigned iterations;
};

__device__ __forceinline__ void compiler_barrier() { asm volatile("" ::: "memory"); }

__device__ __forceinline__ int sm_id() {
  int id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// The accesses of each order. MP: A stores data then publishes flag; B observes flag then loads data. SB:
// each thread publishes its own location, then observes the other's.
// [doc:litmus_ops]
template <Order O, cuda::thread_scope S>
struct Ops {
  __device__ static void store_data(unsigned* p, unsigned v) { store(p, v, cuda::memory_order_relaxed); }
  __device__ static void store_publish(unsigned* p, unsigned v) {
    store(p, v, O == Order::seq_cst ? cuda::memory_order_seq_cst : cuda::memory_order_release);
  }
  __device__ static unsigned load_observe(unsigned* p) {
    return load(p, O == Order::seq_cst ? cuda::memory_order_seq_cst : cuda::memory_order_acquire);
  }
  __device__ static unsigned load_data(unsigned* p) { return load(p, cuda::memory_order_relaxed); }
  __device__ static void between() {
    if constexpr (O == Order::fence_block) __threadfence_block();
    if constexpr (O == Order::fence_device) __threadfence();
  }

 private:
  static constexpr bool atomic = O == Order::release_acquire || O == Order::seq_cst;
  __device__ static void store(unsigned* p, unsigned v, cuda::memory_order mo) {
    if constexpr (atomic) {
      cuda::atomic_ref<unsigned, S>(*p).store(v, mo);
    } else if constexpr (O == Order::plain) {
      *p = v;
    } else {
      *static_cast<volatile unsigned*>(p) = v;
    }
  }
  __device__ static unsigned load(unsigned* p, cuda::memory_order mo) {
    if constexpr (atomic) return cuda::atomic_ref<unsigned, S>(*p).load(mo);
    else if constexpr (O == Order::plain) return *p;
    else return *static_cast<volatile unsigned*>(p);
  }
};
// [/doc:litmus_ops]

// Announces `word` (handshake_word) and waits until the partner's word names iteration `i` or later.
// Returns the partner's word, or 0 after kSpinLimit polls.
__device__ __forceinline__ unsigned handshake(unsigned* mine, unsigned* theirs, unsigned word, unsigned i) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*mine).store(word, cuda::memory_order_relaxed);
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> partner(*theirs);
  for (unsigned polls = 0; polls < kSpinLimit; ++polls) {
    const unsigned w = partner.load(cuda::memory_order_relaxed);
    if (handshake_iteration(w) >= i) return w;
  }
  return 0;
}

// ++count[o] without indexing the array by a run-time value, which would put it in local memory.
__device__ __forceinline__ void tally(unsigned (&count)[kOutcomes], unsigned o) {
#pragma unroll
  for (unsigned k = 0; k < kOutcomes; ++k) count[k] += k == o ? 1u : 0u;
}

// The stress warps: random reads of a shared buffer and writes to lines of their own, until every litmus
// thread of the block is done. Nothing they touch is touched by a litmus thread.
__device__ void stress(const LitmusArgs& a, unsigned& finished) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_block> done(finished);
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = blockIdx.x * kStressWarps + threadIdx.x / 32 - kLitmusWarps;
  unsigned* own = a.stress_own + static_cast<std::size_t>(warp) * kStressOwnLines * kLineWords + lane;
  unsigned x = (warp + 1) * 2654435761u;
  unsigned acc = 0;
  while (done.load(cuda::memory_order_relaxed) < kLitmusThreads) {
    for (int r = 0; r < 16; ++r) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      acc += a.stress_read[static_cast<std::size_t>(x % kStressReadLines) * kLineWords + lane];
      own[(x >> 24) % kStressOwnLines * kLineWords] = acc;
    }
  }
}

template <Litmus T, Order O, cuda::thread_scope S>
__global__ void __launch_bounds__(kLitmusBlock) litmus_kernel(LitmusArgs a) {
  __shared__ unsigned finished;
  if (threadIdx.x == 0) {
    finished = 0;
    a.sm_of_block[blockIdx.x] = sm_id();
  }
  __syncthreads();
  if (threadIdx.x >= kLitmusThreads) {
    stress(a, finished);
    return;
  }
  using Op = Ops<O, S>;
  const unsigned pairs = gridDim.x / 2;
  const bool is_b = blockIdx.x >= pairs;
  const std::size_t k = static_cast<std::size_t>(is_b ? blockIdx.x - pairs : blockIdx.x) * kLitmusThreads + threadIdx.x;
  unsigned* const first = a.lines + static_cast<std::size_t>(a.place[2 * k]) * kLineWords;       // MP data, SB x
  unsigned* const second = a.lines + static_cast<std::size_t>(a.place[2 * k + 1]) * kLineWords;  // MP flag, SB y
  unsigned* const mine = a.handshake + (2 * k + (is_b ? 1 : 0)) * kLineWords;
  unsigned* const theirs = a.handshake + (2 * k + (is_b ? 0 : 1)) * kLineWords;

  unsigned count[kOutcomes] = {0, 0, 0, 0};
  // SB: thread A sends its last two results with its handshake word; B, one iteration later, pairs the one
  // it needs with its own (handshake_word in litmus_reference.hpp).
  unsigned recent = 0;
  bool b_saw = false;
  bool ok = true;
  for (unsigned i = 1;; ++i) {
    const unsigned w = handshake(mine, theirs, handshake_word(i, recent), i);
    if (w == 0) {
      ok = false;
      break;
    }
    if constexpr (T == Litmus::sb) {
      if (is_b && i > 1) {
        tally(count, outcome_of(a_saw_previous(w, i), b_saw));
      }
    }
    if (i > a.iterations) break;
    // [doc:litmus_iteration]
    compiler_barrier();
    if constexpr (T == Litmus::mp) {
      // [doc:litmus_mp]
      if (!is_b) {
        Op::store_data(first, i);
        Op::between();
        Op::store_publish(second, i);
      } else {
        const unsigned flag = Op::load_observe(second);
        Op::between();
        const unsigned data = Op::load_data(first);
        tally(count, classify(i, flag, data));
      }
      // [/doc:litmus_mp]
    } else {
      Op::store_publish(is_b ? second : first, i);
      Op::between();
      const bool saw = is_new(Op::load_observe(is_b ? first : second), i);
      if (is_b) b_saw = saw;
      else recent = push_result(recent, saw);
    }
    compiler_barrier();
    // [/doc:litmus_iteration]
  }
  if (!ok) atomicAdd(a.stuck, 1u);
  if (is_b)
    for (unsigned o = 0; o < kOutcomes; ++o)
      if (count[o] != 0) atomicAdd(&a.counts[o], static_cast<unsigned long long>(count[o]));
  cuda::atomic_ref<unsigned, cuda::thread_scope_block>(finished).fetch_add(1u, cuda::memory_order_relaxed);
}

using LitmusKernel = void (*)(LitmusArgs);

template <Litmus T, Order O>
LitmusKernel litmus_kernel_for(Scope s) {
  if constexpr (O == Order::release_acquire || O == Order::seq_cst) {
    switch (s) {
      case Scope::block: return litmus_kernel<T, O, cuda::thread_scope_block>;
      case Scope::device: return litmus_kernel<T, O, cuda::thread_scope_device>;
      case Scope::system: return litmus_kernel<T, O, cuda::thread_scope_system>;
    }
    throw std::invalid_argument("unknown scope");
  } else {
    return litmus_kernel<T, O, cuda::thread_scope_device>;  // no atomics: the scope plays no part
  }
}

template <Litmus T>
LitmusKernel litmus_kernel_for(Order o, Scope s) {
  switch (o) {
    case Order::plain: return litmus_kernel_for<T, Order::plain>(s);
    case Order::volatile_access: return litmus_kernel_for<T, Order::volatile_access>(s);
    case Order::fence_block: return litmus_kernel_for<T, Order::fence_block>(s);
    case Order::fence_device: return litmus_kernel_for<T, Order::fence_device>(s);
    case Order::release_acquire: return litmus_kernel_for<T, Order::release_acquire>(s);
    case Order::seq_cst: return litmus_kernel_for<T, Order::seq_cst>(s);
  }
  throw std::invalid_argument("unknown order");
}

inline LitmusKernel litmus_kernel_for(Litmus t, Order o, Scope s) {
  return t == Litmus::mp ? litmus_kernel_for<Litmus::mp>(o, s) : litmus_kernel_for<Litmus::sb>(o, s);
}

// Blocks a run of this kernel may use on the current device (litmus_grid), 0 when the GPU cannot hold two
// blocks at once or has no cooperative launch.
inline unsigned litmus_grid_for_device(Litmus t, Order o, Scope s) {
  int device = 0, sms = 0, coop = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device));
  if (!coop) return 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, reinterpret_cast<const void*>(litmus_kernel_for(t, o, s)), static_cast<int>(kLitmusBlock), 0));
  return litmus_grid(sms, per_sm);
}

// The device memory of a run, sized for a plan.
struct LitmusBuffers {
  explicit LitmusBuffers(const LitmusPlan& p)
      : lines(2 * static_cast<std::size_t>(p.instances) * kLineWords),
        place(2 * static_cast<std::size_t>(p.instances)),
        handshake(2 * static_cast<std::size_t>(p.instances) * kLineWords),
        stress_read(static_cast<std::size_t>(kStressReadLines) * kLineWords),
        stress_own(static_cast<std::size_t>(p.grid) * kStressWarps * kStressOwnLines * kLineWords),
        counts(kOutcomes),
        stuck(1),
        sm_of_block(p.grid) {}
  DeviceBuffer<unsigned> lines;
  DeviceBuffer<std::uint32_t> place;
  DeviceBuffer<unsigned> handshake;
  DeviceBuffer<unsigned> stress_read;
  DeviceBuffer<unsigned> stress_own;
  DeviceBuffer<unsigned long long> counts;
  DeviceBuffer<unsigned> stuck;
  DeviceBuffer<int> sm_of_block;
};

// Zeroes everything a run counts on, then launches it cooperatively (every block resident, or the launch
// fails instead of deadlocking). `place` must hold litmus_placement(p.instances, ...).
inline void launch_litmus(Litmus t, Order o, Scope s, const LitmusPlan& p, LitmusBuffers& b, cudaStream_t stream) {
  b.lines.fill_bytes(0, stream);
  b.handshake.fill_bytes(0, stream);
  b.stress_read.fill_bytes(0, stream);
  b.counts.fill_bytes(0, stream);
  b.stuck.fill_bytes(0, stream);
  b.sm_of_block.fill_bytes(0xff, stream);
  LitmusArgs args{b.lines.data(),      b.place.data(),  b.handshake.data(), b.stress_read.data(),
                  b.stress_own.data(), b.counts.data(), b.stuck.data(),     b.sm_of_block.data(),
                  p.iterations};
  void* params[] = {&args};
  CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(litmus_kernel_for(t, o, s)), dim3(p.grid),
                                         dim3(kLitmusBlock), params, 0, stream));
  CUDA_CHECK_LAUNCH();
}

// What a run leaves behind, read back.
struct LitmusResult {
  LitmusCounts counts;
  unsigned stuck = 0;             // threads that gave up waiting for their partner
  unsigned pairs_same_sm = 0;     // block pairs that ran on one SM
  std::size_t stale_lines = 0;    // locations not holding the last iteration's value at the end
};

inline LitmusResult read_litmus(const LitmusPlan& p, const LitmusBuffers& b, cudaStream_t stream) {
  CUDA_CHECK(cudaStreamSynchronize(stream));
  LitmusResult r;
  std::vector<unsigned long long> c = b.counts.download();
  for (unsigned o = 0; o < kOutcomes; ++o) r.counts.outcome[o] = c[o];
  b.stuck.download(&r.stuck, 1);
  const std::vector<int> sm = b.sm_of_block.download();
  for (unsigned pair = 0; pair < p.pairs; ++pair) r.pairs_same_sm += sm[pair] == sm[pair + p.pairs] ? 1u : 0u;
  // Every location was written last by its thread's final iteration (the kernel has ended: all stores land).
  const std::vector<unsigned> lines = b.lines.download();
  for (std::size_t l = 0; l < lines.size() / kLineWords; ++l) r.stale_lines += lines[l * kLineWords] != p.iterations;
  return r;
}

}  // namespace
}  // namespace cml::ch01
