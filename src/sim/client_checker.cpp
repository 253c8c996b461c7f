#include "src/sim/client_checker.hpp"

#include <fmt/format.h>

#include "base/assert.hpp"
#include "base/byte_order.hpp"

namespace rtotem::sim {
namespace {

// The byte at `at` of message `id`: every byte depends on the whole stamp and on its place.
std::byte fill_byte(ClientMessageId id, std::size_t at) noexcept {
  std::uint64_t x =
      (id.counter * 0x9E3779B97F4A7C15ULL) ^ (std::uint64_t{id.node} << 40) ^ (std::uint64_t{id.pid} << 20) ^ at;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ULL;
  return static_cast<std::byte>(x >> 56);
}

ClientMessageId read_stamp(std::span<const std::byte> data) noexcept {
  return ClientMessageId{get_be<std::uint32_t>(data.data()), get_be<std::uint32_t>(data.data() + 4),
                         get_be<std::uint64_t>(data.data() + 8)};
}

}  // namespace

void write_client_message(std::span<std::byte> out, ClientMessageId id) {
  RTOTEM_ASSERT(out.size() >= kClientStampSize);
  put_be<std::uint32_t>(out.data(), id.node);
  put_be<std::uint32_t>(out.data() + 4, id.pid);
  put_be<std::uint64_t>(out.data() + 8, id.counter);
  for (std::size_t at = kClientStampSize; at < out.size(); ++at) out[at] = fill_byte(id, at);
}

void ClientChecker::record_offer(ClientMessageId id, std::string_view group, std::size_t size) {
  const bool added = offered_.try_emplace({id.node, id.pid, id.counter}, Offer{std::string(group), size}).second;
  RTOTEM_ASSERT(added);  // counters are never reused
}

void ClientChecker::record_delivery(Time now, NodeId node, std::uint64_t handle, const rtotem_message& message) {
  ++deliveries_;
  if (message.len >= piece_threshold_) ++pieced_deliveries_;
  const std::span data(static_cast<const std::byte*>(message.data), message.len);
  const std::string_view group = message.group;
  if (data.size() < kClientStampSize)
    return report(Property::kClientMessage, now, {node, message.nodeid},
                  fmt::format("handle {} got {} bytes in '{}' from {}/{}: shorter than any message sent", handle,
                              data.size(), group, message.nodeid, message.pid));
  const ClientMessageId id = read_stamp(data);
  const std::string what = fmt::format("handle {} got {} bytes in '{}' from {}/{}, stamped {}/{}#{}", handle,
                                       data.size(), group, message.nodeid, message.pid, id.node, id.pid, id.counter);
  const auto offer = offered_.find({id.node, id.pid, id.counter});
  if (offer == offered_.end())
    return report(Property::kClientMessage, now, {node, message.nodeid}, what + ": never sent");
  if (id.node != message.nodeid || id.pid != message.pid || offer->second.group != group ||
      offer->second.size != data.size())
    return report(Property::kClientMessage, now, {node, message.nodeid},
                  fmt::format("{}: sent as {} bytes in '{}'", what, offer->second.size, offer->second.group));
  for (std::size_t at = kClientStampSize; at < data.size(); ++at) {
    if (data[at] != fill_byte(id, at))
      return report(Property::kClientMessage, now, {node, message.nodeid},
                    fmt::format("{}: byte {} is not that message's (pieces of two messages joined?)", what, at));
  }
  auto [last, first] = last_.try_emplace({handle, id.node, id.pid, std::string(group)}, id.counter);
  if (first) return;
  if (id.counter <= last->second)
    return report(Property::kClientFifo, now, {node, message.nodeid},
                  fmt::format("{}: after #{} of that sender", what, last->second));
  last->second = id.counter;
}

void ClientChecker::report(Property property, Time now, std::vector<NodeId> nodes, std::string detail) {
  ++violation_count_;
  if (violations_.size() < kViolationsKept)
    violations_.push_back(Violation{property, now, std::move(nodes), std::nullopt, std::move(detail)});
}

}  // namespace rtotem::sim
