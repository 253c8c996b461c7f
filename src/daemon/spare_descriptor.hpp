// One descriptor held in reserve (/dev/null), for when connections have taken every other one:
// let go for the moment something must have a descriptor (storing the ring sequence number,
// accepting a connection only to close it), then taken again.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "base/fd.hpp"

namespace rtotem::daemon {

class SpareDescriptor {
 public:
  SpareDescriptor() : fd_(open_one()) {}

  // Runs `use` with the spare let go, then takes it again (retaken too if an earlier try failed).
  template <class F>
  decltype(auto) while_released(F&& use) {
    fd_.reset();
    struct Retake {
      Fd& fd;
      ~Retake() { fd = open_one(); }
    } retake{fd_};
    return use();
  }
  // Whether the process has no descriptor left to give (EMFILE/ENFILE): a duplicate of the spare
  // says, and goes at once. Retakes a spare lost earlier; false without one.
  bool process_out_of_descriptors() {
    if (!fd_) fd_ = open_one();
    if (!fd_) return false;
    const int probe = fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0);
    if (probe >= 0) {
      ::close(probe);
      return false;
    }
    return errno == EMFILE || errno == ENFILE;
  }

 private:
  static Fd open_one() { return Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC)); }

  Fd fd_;
};

}  // namespace rtotem::daemon
