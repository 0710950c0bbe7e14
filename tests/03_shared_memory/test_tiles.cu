// The tile kernels (smem_square, smem_rectangle) against the CPU reference: every order, allocation and
// pad, one and several blocks, one and several rounds; outputs poisoned before each launch.
#include <gtest/gtest.h>

#include <vector>

#include "03_shared_memory/kernels/smem_tiles.cuh"
#include "tests/testing.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

TEST(Ch03SquareTile, EveryOrderAllocationAndPad) {
  CML_REQUIRE_GPU();
  for (int blocks : {1, 3})
    for (int rounds : {1, 5}) {
      DeviceBuffer<unsigned> out(static_cast<std::size_t>(blocks) * kSquareThreads);
      for (bool dynamic : {false, true})
        for (unsigned pad : {0u, 1u})
          for (Order write : {Order::kRow, Order::kCol})
            for (Order read : {Order::kRow, Order::kCol}) {
              out.poison();
              if (dynamic) launch_square_dynamic(out.data(), pad, write, read, blocks, rounds, nullptr);
              else launch_square_static(out.data(), pad, write, read, blocks, rounds, nullptr);
              CUDA_CHECK(cudaDeviceSynchronize());
              EXPECT_EQ(out.download(), square_expected(write, read, rounds, static_cast<std::size_t>(blocks)))
                  << (dynamic ? "dynamic " : "static ") << order_name(write) << "/" << order_name(read) << " pad "
                  << pad << " blocks " << blocks << " rounds " << rounds;
            }
    }
}

TEST(Ch03SquareTile, DynamicPadTwoAlsoWorks) {
  CML_REQUIRE_GPU();
  DeviceBuffer<unsigned> out(kSquareThreads);
  out.poison();
  launch_square_dynamic(out.data(), 2, Order::kCol, Order::kRow, 1, 2, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(out.download(), square_expected(Order::kCol, Order::kRow, 2, 1));
}

TEST(Ch03SquareTile, StaticRejectsUnsupportedPad) {
  CML_REQUIRE_GPU();
  DeviceBuffer<unsigned> out(kSquareThreads);
  EXPECT_THROW(launch_square_static(out.data(), 2, Order::kRow, Order::kRow, 1, 1, nullptr), std::invalid_argument);
}

TEST(Ch03RectTile, EveryPatternAllocationAndPad) {
  CML_REQUIRE_GPU();
  for (int blocks : {1, 4})
    for (int rounds : {1, 3}) {
      DeviceBuffer<unsigned> out(static_cast<std::size_t>(blocks) * kRectThreads);
      for (bool dynamic : {false, true})
        for (unsigned pad : {0u, 1u, 2u})
          for (RectPattern p : {RectPattern::kRowRow, RectPattern::kColCol, RectPattern::kRowCol}) {
            out.poison();
            if (dynamic) launch_rect_dynamic(out.data(), p, pad, blocks, rounds, nullptr);
            else launch_rect_static(out.data(), p, pad, blocks, rounds, nullptr);
            CUDA_CHECK(cudaDeviceSynchronize());
            EXPECT_EQ(out.download(), rect_expected(p, rounds, static_cast<std::size_t>(blocks)))
                << (dynamic ? "dynamic " : "static ") << rect_pattern_name(p) << " pad " << pad << " blocks "
                << blocks << " rounds " << rounds;
          }
    }
}

}  // namespace
