// What __launch_bounds__(threads, min_blocks) leaves a thread in registers on a given GPU. Plain C++ (no
// CUDA) so the CPU tests can check the arithmetic.
//
// The second argument is a promise: "min_blocks blocks of `threads` threads run on one SM at once". To
// keep it, ptxas divides the SM's register file among that many blocks. But an SM holds at most
// maxThreadsPerMultiProcessor threads (2048 on some GPUs, 1536 or 1024 on others): where min_blocks
// blocks cannot fit in that many threads, ptxas caps the promise at the blocks that do fit, and each
// thread may keep more registers than the promise would allow on a larger SM. Registers are handed out
// per warp in units of 256 (8 per thread), and no thread gets more than 255.
#pragma once

namespace cml::ch01 {

inline constexpr int kRegisterAllocationUnit = 256;  // registers per warp, the allocation granularity
inline constexpr int kMaxRegistersPerThread = 255;

struct LaunchBoundsCap {
  int blocks_per_sm = 0;         // the blocks the promise can hold on this GPU: min(min_blocks, what fits)
  int registers_per_thread = 0;  // the most registers ptxas may give each thread to keep it
  bool honoured = false;         // the SM can hold all min_blocks blocks (the promise binds as written)
};

// `threads` per block and `min_blocks` from __launch_bounds__; `regs_per_sm` and `max_threads_per_sm`
// from cudaDeviceProp (regsPerMultiprocessor, maxThreadsPerMultiProcessor). All arguments >= 1.
inline LaunchBoundsCap launch_bounds_register_cap(int threads, int min_blocks, int regs_per_sm,
                                                  int max_threads_per_sm) {
  LaunchBoundsCap c;
  if (threads < 1 || min_blocks < 1 || regs_per_sm < 1 || max_threads_per_sm < 1) return c;
  const int fit = max_threads_per_sm / threads;
  c.blocks_per_sm = fit < 1 ? 1 : (min_blocks < fit ? min_blocks : fit);
  c.honoured = c.blocks_per_sm == min_blocks;
  const int warps = (threads + 31) / 32 * c.blocks_per_sm;
  const int per_warp = regs_per_sm / warps / kRegisterAllocationUnit * kRegisterAllocationUnit;
  const int per_thread = per_warp / 32;
  c.registers_per_thread = per_thread < kMaxRegistersPerThread ? per_thread : kMaxRegistersPerThread;
  return c;
}

}  // namespace cml::ch01
