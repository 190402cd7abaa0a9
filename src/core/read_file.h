// read_file: a whole file's bytes as a string, for the JSON, YAML, tokenizer and template files realign reads
// in one piece. The one place such a read is written, so every such file names itself the same way when it
// cannot be read.
#pragma once

#include <string>

namespace realign {

// The file's contents, unchanged (binary). Throws Error(path, "cannot open: <reason>") when it cannot be
// opened, Error(path, "cannot read: <reason>") when reading fails part way.
std::string read_file(const std::string& path);

// Whether `path` names a directory (false where it does not exist or cannot be looked at; never throws):
// where a config field takes a file or the directory holding it.
bool is_directory(const std::string& path);

}  // namespace realign
