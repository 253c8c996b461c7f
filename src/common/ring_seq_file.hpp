// The highest ring sequence number this node has used, kept in its state directory so that a
// restarted node never forms a ring with a number it used before (tocssrp95 §4: ring ids unique).
#pragma once

#include <cstdint>
#include <string>

#include "transport/result.hpp"

namespace rtotem {

class RingSeqFile {
 public:
  // `dir` must exist and be a directory; the file in it is `ringseq`.
  static Result<RingSeqFile> in(const std::string& dir);

  // 0 when no file exists yet. A file that exists but does not parse is an error, never 0: a
  // guess could reuse a ring id.
  Result<std::uint64_t> load() const;
  // Replaces the file atomically and durably: temp file, fsync, rename, fsync of the directory.
  Result<void> store(std::uint64_t seq) const;

  const std::string& path() const noexcept { return path_; }

 private:
  RingSeqFile(std::string dir, std::string path) : dir_(std::move(dir)), path_(std::move(path)) {}
  std::string dir_;
  std::string path_;
};

}  // namespace rtotem
