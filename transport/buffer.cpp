// Buffer descriptors: construction and the writes allowed on an unshared send buffer.
#include "transport/buffer.hpp"

namespace rtotem::transport {

Buffer::Buffer(BufferKind kind, BufferOwner& owner, std::span<std::byte> slot, std::uint32_t index) noexcept
    : data_(slot.data()),
      capacity_(static_cast<std::uint32_t>(slot.size())),
      index_(index),
      kind_(kind),
      owner_(&owner) {
  RTOTEM_ASSERT(slot.size() > kWireHeaderSize);
}

Buffer::Buffer(Buffer&& other) noexcept
    : data_(other.data_),
      capacity_(other.capacity_),
      size_(other.size_),
      index_(other.index_),
      kind_(other.kind_),
      owner_(other.owner_) {
  RTOTEM_ASSERT(other.refs_ == 0);
}

void SendBuffer::set_payload_size(std::uint32_t size) noexcept {
  RTOTEM_ASSERT(refs() == 1);
  RTOTEM_ASSERT(size <= payload_capacity());
  set_size(static_cast<std::uint32_t>(kWireHeaderSize) + size);
  store_payload_len(std::span<std::byte, kWireHeaderSize>(data(), kWireHeaderSize), size);
}

void SendBuffer::set_header_flags(std::uint8_t flags) noexcept {
  RTOTEM_ASSERT(refs() == 1);
  data()[kWireFlagsOffset] = std::byte(flags);
}

void SendBuffer::stamp_header(const WireHeader& header) noexcept {
  RTOTEM_ASSERT(refs() == 1);
  encode_header(header, std::span<std::byte, kWireHeaderSize>(data(), kWireHeaderSize));
  set_size(static_cast<std::uint32_t>(kWireHeaderSize) + header.payload_len);
}

}  // namespace rtotem::transport
