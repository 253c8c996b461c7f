// The highest ring sequence number this node has used, kept in its state directory so that a
// restarted node never forms a ring with a number it used before (tocssrp95 §4: ring ids unique).
// The same kind of file keeps the last seal epoch (src/common/seal_epoch.hpp): any number that
// must never go back across restarts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace rtotem {

// Which number a file keeps: its name in the state directory (its first line is
// "rtotem-<file> 1"), what it is, and what removing a damaged one costs.
struct StateNumber {
  std::string_view file;
  std::string_view what;
  std::string_view if_removed;
};
inline constexpr StateNumber kRingSeqNumber{"ringseq", "ring sequence",
                                            "remove it only if this node's ring ids may be reused"};

class RingSeqFile {
 public:
  // `dir` must exist and be a directory; the file in it is `number.file`.
  static Result<RingSeqFile> in(const std::string& dir, const StateNumber& number = kRingSeqNumber);

  // 0 when no file exists yet. A file that exists but does not parse is an error, never 0: a
  // guess could reuse a ring id.
  Result<std::uint64_t> load() const;
  // Replaces the file atomically and durably: temp file, fsync, rename, fsync of the directory.
  Result<void> store(std::uint64_t seq) const;

  const std::string& path() const noexcept { return path_; }

 private:
  RingSeqFile(std::string dir, std::string path, const StateNumber& number)
      : dir_(std::move(dir)), path_(std::move(path)), number_(number) {}
  std::string dir_;
  std::string path_;
  StateNumber number_;
};

}  // namespace rtotem
