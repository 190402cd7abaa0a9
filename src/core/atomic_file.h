// Atomic file replacement: write to a temp file in the target's directory, fsync, rename over the target.
// A reader sees either the old file or the complete new one, never a torn write.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace realign {

// Streams chunks into the temp file; `produce` calls `write` as many times as it likes.
using ChunkWriter = std::function<void(const void* data, size_t bytes)>;
void write_file_atomically(const std::string& path,
                           const std::function<void(const ChunkWriter& write)>& produce);

// The whole file at once (config, plan, metrics, manifests): the write counterpart of read_file.
void write_text_file(const std::string& path, std::string_view text);

}  // namespace realign
