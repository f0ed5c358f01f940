// Precompiled header for every LibTorch translation unit: parsing torch/torch.h once instead of
// per file is most of the build time saved.
#pragma once

#include <torch/torch.h>
#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
