// GoogleTest helpers for GPU tests: skip (never pass) when no device is usable.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "common/harness.hpp"

#define CML_REQUIRE_GPU()                                                     \
  do {                                                                        \
    std::string cml_why_;                                                     \
    if (!::cml::gpu_available(&cml_why_)) GTEST_SKIP() << "no usable CUDA GPU: " << cml_why_; \
  } while (0)
