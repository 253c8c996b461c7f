#include "src/services/control/reload_wire.hpp"

#include "base/wire_io.hpp"
#include "src/ipc/ipc_protocol.hpp"
#include "src/stack/ring_service.hpp"

namespace rtotem::control {
namespace {

constexpr std::uint8_t kReloadStart = 2;  // 1 is kill_wire.cpp's
constexpr std::uint8_t kReloadReport = 3;
constexpr std::uint8_t kReloadAbort = 4;
constexpr std::uint8_t kReloadKeyStep = 5;

void open(ipc::BodyWriter& out, std::uint8_t kind, const ReloadId& id) {
  out.u8(static_cast<std::uint8_t>(RingService::kNodeControl));
  out.u8(kind);
  out.u32(id.origin);
  out.u64(id.serial);
}

}  // namespace

std::vector<std::byte> encode_reload(const ReloadMessage& message) {
  ipc::BodyWriter out;
  if (const auto* start = std::get_if<ReloadStart>(&message)) {
    open(out, kReloadStart, start->id);
  } else if (const auto* sent = std::get_if<ReloadReportMessage>(&message)) {
    open(out, kReloadReport, sent->id);
    const ReloadReport& r = sent->report;
    out.u32(r.node);
    out.u32(static_cast<std::uint32_t>(r.error));
    out.string(std::string_view(r.summary).substr(0, kReloadSummaryMax));
    out.string(r.cluster);
  } else if (const auto* abort = std::get_if<ReloadAbort>(&message)) {
    open(out, kReloadAbort, abort->id);
    out.string(std::string_view(abort->reason).substr(0, ipc::kReasonMax));
  } else {
    const auto& step = std::get<ReloadKeyStep>(message);
    open(out, kReloadKeyStep, step.id);
    out.u32(step.node);
    out.u8(step.step);
  }
  return std::move(out.data());
}

std::optional<ReloadMessage> decode_reload(std::span<const std::byte> message) {
  WireReader in(message);
  if (in.get_u8() != static_cast<std::uint8_t>(RingService::kNodeControl)) return std::nullopt;
  const std::uint8_t kind = in.get_u8();
  ReloadId id;
  id.origin = in.get_u32();
  id.serial = in.get_u64();
  if (in.short_read()) return std::nullopt;
  if (kind == kReloadStart) {
    if (!in.at_end()) return std::nullopt;
    return ReloadStart{id};
  }
  if (kind == kReloadReport) {
    ReloadReport r;
    r.node = in.get_u32();
    r.error = static_cast<int>(in.get_u32());
    if (in.short_read() || r.error > 0) return std::nullopt;  // 0 or a negative errno
    const auto summary = ipc::read_string(in, kReloadSummaryMax);
    if (!summary) return std::nullopt;
    r.summary = std::string(*summary);
    const auto cluster = ipc::read_string(in, kReloadClusterMax);
    if (!cluster || !in.at_end()) return std::nullopt;
    r.cluster = std::string(*cluster);
    return ReloadReportMessage{id, std::move(r)};
  }
  if (kind == kReloadKeyStep) {
    ReloadKeyStep step{id, in.get_u32(), in.get_u8()};
    if (in.short_read() || !in.at_end() || (step.step != 1 && step.step != 2)) return std::nullopt;
    return step;
  }
  if (kind == kReloadAbort) {
    const auto reason = ipc::read_string(in, ipc::kReasonMax);
    if (!reason || !in.at_end()) return std::nullopt;
    return ReloadAbort{id, std::string(*reason)};
  }
  return std::nullopt;
}

}  // namespace rtotem::control
