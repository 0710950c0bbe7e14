// What __launch_bounds__(threads, min_blocks) leaves a thread in registers on a given GPU. Plain C++ (no
// CUDA) so the CPU tests can check the arithmetic.
//
// The second argument is a promise: "min_blocks blocks of `threads` threads run on one SM at once". To
// keep it, ptxas divides the SM's register file among that many blocks. But an SM holds at most
// maxThreadsPerMultiProcessor threads (2048 on some GPUs, 1536 or 1024 on others): where min_blocks
// blocks cannot fit in that many threads, ptxas drops the promise altogether (its warning: ".minnctapersm
// will be ignored") rather than scaling it down, and only the first argument still binds: one block of
// `threads` threads must fit. Registers are handed out per warp in units of 256 (8 per thread), and no
// thread gets more than 255.
#pragma once

namespace cml::ch01 {

inline constexpr int kRegisterAllocationUnit = 256;  // registers per warp, the allocation granularity
inline constexpr int kMaxRegistersPerThread = 255;

struct LaunchBoundsCap {
  int blocks_per_sm = 0;         // the blocks the register file is divided among: min_blocks, or 1 if dropped
  int registers_per_thread = 0;  // the most registers ptxas may give each thread under these bounds
  bool honoured = false;         // the SM can hold all min_blocks blocks (the promise binds as written)
};

// `threads` per block and `min_blocks` from __launch_bounds__; `regs_per_sm` and `max_threads_per_sm`
// from cudaDeviceProp (regsPerMultiprocessor, maxThreadsPerMultiProcessor). All arguments >= 1.
inline LaunchBoundsCap launch_bounds_register_cap(int threads, int min_blocks, int regs_per_sm,
                                                  int max_threads_per_sm) {
  LaunchBoundsCap c;
  if (threads < 1 || min_blocks < 1 || regs_per_sm < 1 || max_threads_per_sm < 1) return c;
  c.honoured = static_cast<long long>(min_blocks) * threads <= max_threads_per_sm;
  c.blocks_per_sm = c.honoured ? min_blocks : 1;
  const int warps = (threads + 31) / 32 * c.blocks_per_sm;
  const int per_warp = regs_per_sm / warps / kRegisterAllocationUnit * kRegisterAllocationUnit;
  const int per_thread = per_warp / 32;
  c.registers_per_thread = per_thread < kMaxRegistersPerThread ? per_thread : kMaxRegistersPerThread;
  return c;
}

}  // namespace cml::ch01
