// Address parsing (getaddrinfo, at start-up only) and formatting.
#include "transport/udp/inet_address.hpp"

#include <arpa/inet.h>
#include <netdb.h>

#include <cstring>
#include <memory>

namespace rtotem::transport {

InetAddress::InetAddress() noexcept { std::memset(&storage_, 0, sizeof storage_); }

Result<InetAddress> InetAddress::parse(std::string_view host, std::uint16_t port) {
  if (host.empty()) return Error::make("empty address");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = 0;  // no AI_ADDRCONFIG: the nodelist may name families this host lacks
  addrinfo* found = nullptr;
  const std::string name(host);
  const int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &found);
  if (rc != 0) return Error::make("cannot resolve '{}': {}", name, ::gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owner(found, &::freeaddrinfo);
  auto address = from_sockaddr(found->ai_addr, found->ai_addrlen);
  if (!address) return address;
  return address->with_port(port);
}

Result<InetAddress> InetAddress::from_sockaddr(const sockaddr* sa, socklen_t len) {
  InetAddress a;
  if (sa->sa_family == AF_INET && len >= sizeof(sockaddr_in)) {
    a.length_ = sizeof(sockaddr_in);
  } else if (sa->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    a.length_ = sizeof(sockaddr_in6);
  } else {
    return Error::make("not an IPv4 or IPv6 address (family {})", sa->sa_family);
  }
  std::memcpy(&a.storage_, sa, a.length_);
  return a;
}

std::uint16_t InetAddress::port() const noexcept {
  if (is_v6()) return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
}

InetAddress InetAddress::with_port(std::uint16_t port) const noexcept {
  InetAddress a = *this;
  if (is_v6())
    reinterpret_cast<sockaddr_in6*>(&a.storage_)->sin6_port = htons(port);
  else
    reinterpret_cast<sockaddr_in*>(&a.storage_)->sin_port = htons(port);
  return a;
}

bool InetAddress::is_multicast() const noexcept {
  if (is_v6()) return IN6_IS_ADDR_MULTICAST(&reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr);
  return IN_MULTICAST(ntohl(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr));
}

bool InetAddress::is_unspecified() const noexcept {
  if (is_v6()) return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr);
  return reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr == htonl(INADDR_ANY);
}

bool InetAddress::same_host(const InetAddress& other) const noexcept {
  if (family() != other.family()) return false;
  if (is_v6()) {
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(&other.storage_)->sin6_addr, sizeof(in6_addr)) == 0;
  }
  return reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr ==
         reinterpret_cast<const sockaddr_in*>(&other.storage_)->sin_addr.s_addr;
}

bool InetAddress::is(const sockaddr_storage& sa) const noexcept {
  InetAddress source;
  source.storage_ = sa;
  source.length_ = length_;  // same family, or == says no
  return *this == source;
}

bool operator==(const InetAddress& a, const InetAddress& b) noexcept { return a.same_host(b) && a.port() == b.port(); }

std::string InetAddress::host_string() const {
  char text[INET6_ADDRSTRLEN] = "?";
  if (is_v6())
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, text, sizeof text);
  else
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, text, sizeof text);
  return text;
}

std::string InetAddress::to_string() const {
  if (is_v6()) return fmt::format("[{}]:{}", host_string(), port());
  return fmt::format("{}:{}", host_string(), port());
}

}  // namespace rtotem::transport
