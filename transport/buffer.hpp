// Packet buffers: descriptors of slots in one BufferArena, shared through intrusive references.
//
// Ownership: a buffer belongs to its owner (a SendPool or a RecvRing) for its whole life. A Ref is
// one share of it; when the last Ref drops, the owner gets it back: a send buffer returns to its
// pool's free list, a receive buffer is re-posted to the ring it came from. The owner is fixed at
// construction (the tag), so a receive buffer can never end up in a send pool.
//
// Threading: a pool, its buffers and their Refs belong to one thread (the daemon's event loop);
// counts are not atomic.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "base/assert.hpp"
#include "transport/wire_header.hpp"

namespace rtotem::transport {

class Buffer;
class SendBuffer;

class BufferOwner {
 public:
  // Called when the last Ref to `buffer` drops.
  virtual void on_released(Buffer& buffer) noexcept = 0;

 protected:
  ~BufferOwner() = default;
};

enum class BufferKind : std::uint8_t { kSend, kRecv };

template <class T>
class Ref;

// A slot of `capacity` bytes holding one wire packet: the transport header, then the payload.
class Buffer {
 public:
  Buffer(Buffer&& other) noexcept;  // only while building an owner's array, before any Ref exists
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer& operator=(Buffer&&) = delete;

  BufferKind kind() const noexcept { return kind_; }
  const BufferOwner& owner() const noexcept { return *owner_; }
  std::uint32_t index() const noexcept { return index_; }
  std::uint32_t refs() const noexcept { return refs_; }
  std::uint32_t capacity() const noexcept { return capacity_; }
  std::uint32_t payload_capacity() const noexcept { return capacity_ - kWireHeaderSize; }

  // The whole packet as it travels: header and payload.
  std::span<const std::byte> wire() const noexcept { return {data_, size_}; }
  std::span<const std::byte> payload() const noexcept { return {data_ + kWireHeaderSize, size_ - kWireHeaderSize}; }
  // Where a backend's device writes or reads (the full slot, for posting receives).
  std::byte* data() const noexcept { return data_; }

 protected:
  Buffer(BufferKind kind, BufferOwner& owner, std::span<std::byte> slot, std::uint32_t index) noexcept;
  ~Buffer() = default;

  void set_size(std::uint32_t size) noexcept {
    RTOTEM_ASSERT(size >= kWireHeaderSize && size <= capacity_);
    size_ = size;
  }

 private:
  template <class>
  friend class Ref;
  void retain() noexcept { ++refs_; }
  void release() noexcept {
    RTOTEM_ASSERT(refs_ > 0);
    if (--refs_ == 0) owner_->on_released(*this);
  }

  std::byte* data_;
  std::uint32_t capacity_;
  std::uint32_t size_ = kWireHeaderSize;
  std::uint32_t refs_ = 0;
  std::uint32_t index_;
  BufferKind kind_;
  BufferOwner* owner_;
};

// An intrusive shared reference. Copying shares; it never copies bytes.
template <class T>
class Ref {
 public:
  Ref() noexcept = default;
  Ref(const Ref& other) noexcept : p_(other.p_) {
    if (p_) p_->retain();
  }
  Ref(Ref&& other) noexcept : p_(std::exchange(other.p_, nullptr)) {}
  template <class U>
  requires std::derived_from<U, T> Ref(const Ref<U>& other)
  noexcept : p_(other.p_) {  // NOLINT: upcast, like shared_ptr
    if (p_) p_->retain();
  }
  template <class U>
  requires std::derived_from<U, T> Ref(Ref<U>&& other)
  noexcept : p_(std::exchange(other.p_, nullptr)) {}  // NOLINT
  ~Ref() { reset(); }

  Ref& operator=(Ref other) noexcept {
    std::swap(p_, other.p_);
    return *this;
  }

  void reset() noexcept {
    if (T* p = std::exchange(p_, nullptr)) static_cast<Buffer*>(p)->release();
  }
  T* get() const noexcept { return p_; }
  T* operator->() const noexcept {
    RTOTEM_ASSERT(p_);
    return p_;
  }
  T& operator*() const noexcept {
    RTOTEM_ASSERT(p_);
    return *p_;
  }
  explicit operator bool() const noexcept { return p_ != nullptr; }

 private:
  template <class>
  friend class Ref;
  friend class SendPool;
  friend class RecvRing;
  friend Ref<SendBuffer> as_send_buffer(const Ref<Buffer>& ref) noexcept;
  explicit Ref(T* p) noexcept : p_(p) {
    if (p_) p_->retain();
  }  // owners hand out first refs

  T* p_ = nullptr;
};

// A buffer the protocol fills and shares (retransmit queue, backend transmit queue, loopback).
// Its bytes may be written only while one Ref holds it: a shared buffer may be on the wire.
class SendBuffer final : public Buffer {
 public:
  SendBuffer(BufferOwner& owner, std::span<std::byte> slot, std::uint32_t index) noexcept
      : Buffer(BufferKind::kSend, owner, slot, index) {}

  std::span<std::byte> writable_payload() noexcept {
    RTOTEM_ASSERT(refs() == 1);
    return {data() + kWireHeaderSize, payload_capacity()};
  }
  // Sets the payload length, in the buffer and in its wire header.
  void set_payload_size(std::uint32_t size) noexcept;
  // Writes the whole header; done once when the pool hands the buffer out.
  void stamp_header(const WireHeader& header) noexcept;
  // Sets the header's flags (kFlagLinkControl), before the buffer is shared.
  void set_header_flags(std::uint8_t flags) noexcept;
};

// A buffer a backend received into. Read-only to everyone else; it knows which ring it returns to.
class RecvBuffer final : public Buffer {
 public:
  RecvBuffer(BufferOwner& owner, std::span<std::byte> slot, std::uint32_t index) noexcept
      : Buffer(BufferKind::kRecv, owner, slot, index) {}

  NodeId from() const noexcept { return from_; }
  // For the backend that received it: `size` wire bytes, validated, sent by `from`.
  void set_received(std::uint32_t size, NodeId from) noexcept {
    RTOTEM_ASSERT(refs() == 1);
    set_size(size);
    from_ = from;
  }

 private:
  NodeId from_ = kNoNode;
};

using BufferRef = Ref<Buffer>;
using SendBufferRef = Ref<SendBuffer>;
using RecvBufferRef = Ref<RecvBuffer>;

// Another share of the send buffer behind `ref`; empty if it is a receive buffer. Lets a protocol
// send its own stored message again without copying it.
inline SendBufferRef as_send_buffer(const BufferRef& ref) noexcept {
  if (!ref || ref->kind() != BufferKind::kSend) return {};
  return SendBufferRef(static_cast<SendBuffer*>(ref.get()));
}

}  // namespace rtotem::transport
