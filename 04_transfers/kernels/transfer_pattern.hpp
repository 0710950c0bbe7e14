// The data every transfer in this chapter carries, and how it is checked: the suite's pattern
// (common/pattern.hpp: pattern_word, fill_pattern_host, check_pattern_host, poison_host, kPoisonWord),
// visible here as cml names.
#pragma once

#include "common/pattern.hpp"
