// Owners of every verbs and librdmacm object the RDMA backend makes, so each is destroyed exactly
// once, in reverse order of creation, on every error path too.
//
// Declare members in creation order (event channel, cm_id, PD, MR, completion channel, CQ, QP,
// multicast join, AH): destruction then runs in reverse and the cm_id goes after its QP, as
// librdmacm expects.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <sys/socket.h>

#include <cstring>
#include <memory>
#include <utility>

namespace rtotem::transport {

template <auto Destroy>
struct VerbsDeleter {
  template <class T>
  void operator()(T* p) const noexcept {
    if (p) (void)Destroy(p);
  }
};

using EventChannel = std::unique_ptr<rdma_event_channel, VerbsDeleter<rdma_destroy_event_channel>>;
using CmId = std::unique_ptr<rdma_cm_id, VerbsDeleter<rdma_destroy_id>>;
using CmEvent = std::unique_ptr<rdma_cm_event, VerbsDeleter<rdma_ack_cm_event>>;  // acked when dropped
using ProtectionDomain = std::unique_ptr<ibv_pd, VerbsDeleter<ibv_dealloc_pd>>;
using MemoryRegion = std::unique_ptr<ibv_mr, VerbsDeleter<ibv_dereg_mr>>;
using CompletionChannel = std::unique_ptr<ibv_comp_channel, VerbsDeleter<ibv_destroy_comp_channel>>;
using CompletionQueue = std::unique_ptr<ibv_cq, VerbsDeleter<ibv_destroy_cq>>;
using AddressHandle = std::unique_ptr<ibv_ah, VerbsDeleter<ibv_destroy_ah>>;

// The QP rdma_create_qp made on a cm_id: it lives in the id (id->qp), so the owner holds the id
// and destroys only the QP.
using CmQueuePair = std::unique_ptr<rdma_cm_id, VerbsDeleter<rdma_destroy_qp>>;

// A joined multicast group of a cm_id: left when dropped (the QP is detached from the group).
class MulticastJoin {
 public:
  MulticastJoin() noexcept = default;
  MulticastJoin(rdma_cm_id* id, const sockaddr* group, socklen_t length) noexcept : id_(id) {
    std::memcpy(&group_, group, length);
  }
  MulticastJoin(MulticastJoin&& other) noexcept : id_(std::exchange(other.id_, nullptr)), group_(other.group_) {}
  MulticastJoin& operator=(MulticastJoin&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, nullptr);
      group_ = other.group_;
    }
    return *this;
  }
  MulticastJoin(const MulticastJoin&) = delete;
  MulticastJoin& operator=(const MulticastJoin&) = delete;
  ~MulticastJoin() { reset(); }

  explicit operator bool() const noexcept { return id_ != nullptr; }
  void reset() noexcept {
    if (rdma_cm_id* id = std::exchange(id_, nullptr))
      (void)rdma_leave_multicast(id, reinterpret_cast<sockaddr*>(&group_));
  }

 private:
  rdma_cm_id* id_ = nullptr;
  sockaddr_storage group_{};
};

}  // namespace rtotem::transport
