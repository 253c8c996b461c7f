// Reading and durably replacing the ring sequence file.
#include "src/common/ring_seq_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <string_view>

#include "base/fd.hpp"

namespace rtotem {
namespace {

Result<void> write_all(int fd, std::string_view text, const std::string& path) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::sys(errno, "write {}", path);
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

// The file's first line.
std::string magic_of(const StateNumber& number) { return fmt::format("rtotem-{} 1\n", number.file); }

}  // namespace

Result<RingSeqFile> RingSeqFile::in(const std::string& dir, const StateNumber& number) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return Error::sys(errno, "state directory {}", dir);
  if (!S_ISDIR(st.st_mode)) return Error::make("state directory {} is not a directory", dir);
  return RingSeqFile(dir, fmt::format("{}/{}", dir, number.file), number);
}

Result<std::uint64_t> RingSeqFile::load() const {
  Fd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT) return std::uint64_t{0};
    return Error::sys(errno, "open {}", path_);
  }
  char text[64];
  const ssize_t n = ::read(fd.get(), text, sizeof text);
  if (n < 0) return Error::sys(errno, "read {}", path_);
  std::string_view content(text, static_cast<std::size_t>(n));
  const std::string magic = magic_of(number_);
  if (content.size() <= magic.size() + 1 || !content.starts_with(magic) || !content.ends_with('\n'))
    return Error::make("{}: not an rtotem {} file ({})", path_, number_.what, number_.if_removed);
  content.remove_prefix(magic.size());
  content.remove_suffix(1);
  std::uint64_t seq = 0;
  auto [end, ec] = std::from_chars(content.data(), content.data() + content.size(), seq);
  if (ec != std::errc() || end != content.data() + content.size())
    return Error::make("{}: {} '{}' is not a number", path_, number_.what, content);
  return seq;
}

Result<void> RingSeqFile::store(std::uint64_t seq) const {
  const std::string temp = path_ + ".tmp";
  {
    Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!fd) return Error::sys(errno, "create {}", temp);
    if (auto ok = write_all(fd.get(), fmt::format("{}{}\n", magic_of(number_), seq), temp); !ok) return ok;
    if (::fsync(fd.get()) != 0) return Error::sys(errno, "fsync {}", temp);
  }
  if (::rename(temp.c_str(), path_.c_str()) != 0) return Error::sys(errno, "rename {} to {}", temp, path_);
  Fd dir(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return Error::sys(errno, "open {}", dir_);
  if (::fsync(dir.get()) != 0) return Error::sys(errno, "fsync {}", dir_);  // the rename itself
  return {};
}

}  // namespace rtotem
