// Reading the cluster key file with ssh's care, and writing one that appears whole or not at all.
#include "src/common/key_file.hpp"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <filesystem>

#include "base/fd.hpp"

namespace rtotem {
namespace {

using transport::ClusterKey;
using transport::kClusterKeySize;

constexpr const char* kKeygenHint = "make one with rtotem-keygen and copy it to every node";

// The stack copy of the file's bytes, wiped on every path out.
struct WipedBytes {
  std::array<std::byte, kCorosyncKeyMax> bytes{};
  ~WipedBytes() { sodium_memzero(bytes.data(), bytes.size()); }
};

bool corosync_key_size(off_t size) {
  return size >= static_cast<off_t>(kCorosyncKeyMin) && size <= static_cast<off_t>(kCorosyncKeyMax);
}

Result<void> check_key_stat(const std::string& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return Error::make("key file {}: not a regular file", path);
  if ((st.st_mode & 077) != 0)
    return Error::make(
        "key file {}: permissions {:04o} are too open: a cluster key must not be accessible by "
        "group or others (chmod 0400 {})",
        path, st.st_mode & 07777, path);
  if (st.st_size != static_cast<off_t>(kClusterKeySize) && !corosync_key_size(st.st_size))
    return Error::make(
        "key file {}: {} bytes; a cluster key is {} bytes (rtotem-keygen's) or a Corosync authkey of {} to {} "
        "bytes ({})",
        path, st.st_size, kClusterKeySize, kCorosyncKeyMin, kCorosyncKeyMax, kKeygenHint);
  return {};
}

// Deletes the temp file unless it was put in place.
class TempFile {
 public:
  explicit TempFile(std::string path) : path_(std::move(path)) {}
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!path_.empty()) (void)::unlink(path_.c_str());
  }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

Result<void> write_key(int fd, const ClusterKey& key, const std::string& path) {
  const auto bytes = key.bytes();
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::sys(errno, "write {}", path);
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) return Error::sys(errno, "fsync {}", path);
  return {};
}

Error exists_error(const std::string& path) {
  return Error::make("{} exists: not replacing a cluster key (--force does; then every node needs the new one)", path);
}

Result<void> sync_dir(const std::string& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return Error::sys(errno, "open {}", dir);
  if (::fsync(fd.get()) != 0) return Error::sys(errno, "fsync {}", dir);
  return {};
}

}  // namespace

Result<ClusterKey> read_key_file(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd) {
    if (errno == ENOENT) return Error::make("key file {}: does not exist ({})", path, kKeygenHint);
    return Error::sys(errno, "key file {}", path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error::sys(errno, "key file {}: fstat", path);
  if (auto ok = check_key_stat(path, st); !ok) return ok.error();
  WipedBytes buffer;
  const auto size = static_cast<std::size_t>(st.st_size);
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd.get(), buffer.bytes.data() + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::sys(errno, "read key file {}", path);
    if (n == 0) return Error::make("key file {}: shrank to {} bytes while being read", path, got);
    got += static_cast<std::size_t>(n);
  }
  const std::span<const std::byte> bytes(buffer.bytes.data(), size);
  return size == kClusterKeySize ? ClusterKey::from_bytes(bytes) : ClusterKey::derive(bytes);
}

Result<void> write_key_file(const std::string& path, bool force) {
  if (path.empty()) return Error::make("key file: empty path");
  struct stat st {};
  if (!force && ::lstat(path.c_str(), &st) == 0) return exists_error(path);
  const std::filesystem::path target(path);
  const std::string dir = target.has_parent_path() ? target.parent_path().string() : std::string(".");
  if (::stat(dir.c_str(), &st) != 0) return Error::sys(errno, "{}: directory {}", path, dir);
  auto key = ClusterKey::random();
  if (!key) return key.error();
  std::string pattern = path + ".XXXXXX";
  Fd fd(::mkostemp(pattern.data(), O_CLOEXEC));
  if (!fd) return Error::sys(errno, "create a temp file next to {}", path);
  const TempFile temp(pattern);
  // Before a byte of key is written: the temp file is never readable by anyone else.
  if (::fchmod(fd.get(), kKeyFileMode) != 0) return Error::sys(errno, "chmod {}", temp.path());
  if (auto ok = write_key(fd.get(), *key, temp.path()); !ok) return ok;
  if (force) {
    if (::rename(temp.path().c_str(), path.c_str()) != 0)
      return Error::sys(errno, "rename {} to {}", temp.path(), path);
  } else if (::link(temp.path().c_str(), path.c_str()) != 0) {
    if (errno == EEXIST) return exists_error(path);
    return Error::sys(errno, "link {} to {}", temp.path(), path);
  }
  return sync_dir(dir);
}

}  // namespace rtotem
