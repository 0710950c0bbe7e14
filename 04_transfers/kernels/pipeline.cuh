// Copy in -> compute -> copy out, either all at once in one stream or staged in chunks over several
// streams (Best Practices Guide 9.1.2: "staged concurrent copy and execute").
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "04_transfers/kernels/lcg.cuh"
#include "04_transfers/kernels/overlap_model.hpp"
#include "common/cuda_check.hpp"

namespace cml::ch04 {
namespace {

inline constexpr std::size_t kChunkAlignWords = 256;  // chunks start on 1 KB boundaries

// h_in and h_out must be pinned for the copies to be asynchronous (and so to overlap anything).
struct Pipeline {
  const std::uint32_t* h_in;
  std::uint32_t* d_in;
  std::uint32_t* d_out;
  std::uint32_t* h_out;
  std::size_t n;
  std::uint32_t steps;
};

// Events recorded between the steps of one chunk, for a timeline (timeline.hpp). Events in a stream
// complete in order, so four of them bracket the chunk's three steps.
struct ChunkEvents {
  cudaEvent_t before_h2d, after_h2d, after_kernel, after_d2h;
};

inline void record_if(const ChunkEvents* ev, cudaEvent_t ChunkEvents::*which, cudaStream_t s) {
  if (ev != nullptr) CUDA_CHECK(cudaEventRecord(ev->*which, s));
}

// [doc:pipeline_chunk]
inline void pipeline_chunk(const Pipeline& p, std::size_t first, std::size_t count, cudaStream_t s,
                           const ChunkEvents* ev = nullptr) {
  const std::size_t bytes = count * sizeof(std::uint32_t);
  record_if(ev, &ChunkEvents::before_h2d, s);
  CUDA_CHECK(cudaMemcpyAsync(p.d_in + first, p.h_in + first, bytes, cudaMemcpyHostToDevice, s));
  record_if(ev, &ChunkEvents::after_h2d, s);
  launch_lcg_chain(p.d_in + first, p.d_out + first, count, p.steps, s);
  record_if(ev, &ChunkEvents::after_kernel, s);
  CUDA_CHECK(cudaMemcpyAsync(p.h_out + first, p.d_out + first, bytes, cudaMemcpyDeviceToHost, s));
  record_if(ev, &ChunkEvents::after_d2h, s);
}
// [/doc:pipeline_chunk]

inline void launch_pipeline_sequential(const Pipeline& p, cudaStream_t s, const ChunkEvents* ev = nullptr) {
  pipeline_chunk(p, 0, p.n, s, ev);
}

// How many of `chunks` chunks are not empty (small n leaves the last ones empty).
inline int chunks_used(std::size_t n, int chunks) {
  int used = 0;
  while (used < chunks && chunk_of(n, chunks, used, kChunkAlignWords).count != 0) ++used;
  return used;
}

// Chunk k goes H2D -> kernel -> D2H in streams[k], so one chunk's H2D, another's kernel and a third's
// D2H can run at once. The streams fork from `s` (event `fork`) and join back into it (events `joins`),
// so work recorded on `s` before and after (e.g. timing events) brackets all of them. `events`, when
// given, holds one ChunkEvents per chunk in use (chunks_used).
inline void launch_pipeline_staged(const Pipeline& p, int chunks, const cudaStream_t* streams, cudaEvent_t fork,
                                   const cudaEvent_t* joins, cudaStream_t s, const ChunkEvents* events = nullptr) {
  // [doc:fork_join_chunks]
  CUDA_CHECK(cudaEventRecord(fork, s));
  for (int k = 0; k < chunks; ++k) {
    const Chunk c = chunk_of(p.n, chunks, k, kChunkAlignWords);
    if (c.count == 0) break;
    CUDA_CHECK(cudaStreamWaitEvent(streams[k], fork, 0));
    pipeline_chunk(p, c.first, c.count, streams[k], events != nullptr ? &events[k] : nullptr);
    CUDA_CHECK(cudaEventRecord(joins[k], streams[k]));
    CUDA_CHECK(cudaStreamWaitEvent(s, joins[k], 0));
  }
  // [/doc:fork_join_chunks]
}

}  // namespace
}  // namespace cml::ch04
