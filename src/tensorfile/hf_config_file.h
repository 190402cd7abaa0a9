// HF model directory config: config.json read into a ModelSpec and written from one.
#pragma once

#include <string>

#include "graph/model_spec.h"

namespace realign::tensorfile {

// `dir_or_file`: a model directory holding config.json, or the config file itself. Errors name the file.
ModelSpec read_hf_config(const std::string& dir_or_file);

// Writes <dir>/config.json atomically (model_spec_to_hf_config plus torch_dtype when given, e.g. "bfloat16").
void write_hf_config(const std::string& dir, const ModelSpec& spec, const std::string& torch_dtype = "");

}  // namespace realign::tensorfile
