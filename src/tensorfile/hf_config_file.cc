#include "tensorfile/hf_config_file.h"

#include <sys/stat.h>

#include "core/atomic_file.h"
#include "core/read_file.h"

namespace realign::tensorfile {

ModelSpec read_hf_config(const std::string& dir_or_file) {
  struct stat st;
  std::string path = dir_or_file;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) path += "/config.json";
  Json j = Json::parse(read_file(path), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(path, "not valid JSON");
  return model_spec_from_hf_config(j, path);
}

void write_hf_config(const std::string& dir, const ModelSpec& spec, const std::string& torch_dtype) {
  Json c = model_spec_to_hf_config(spec);
  if (!torch_dtype.empty()) c["torch_dtype"] = torch_dtype;
  write_text_file(dir + "/config.json", c.dump(2) + "\n");
}

}  // namespace realign::tensorfile
