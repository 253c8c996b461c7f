#include "src/common/corosync_files.hpp"

#include <sys/stat.h>

namespace rtotem {

std::string first_existing(std::initializer_list<std::string_view> paths) {
  for (std::string_view path : paths) {
    struct stat st {};
    const std::string name(path);
    if (::stat(name.c_str(), &st) == 0) return name;
  }
  return paths.size() == 0 ? std::string() : std::string(*paths.begin());
}

}  // namespace rtotem
