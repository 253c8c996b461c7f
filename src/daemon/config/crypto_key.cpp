// totem.crypto and totem.keyfile, turned into the key the backend seals with: read at start-up
// (and by rtotemd -t), not while parsing, so the parser stays pure text (and fuzzable).
#include <fmt/format.h>

#include "src/daemon/config/daemon_config.hpp"

namespace rtotem::config {

Result<std::shared_ptr<const transport::ClusterKey>> load_cluster_key(const DaemonConfig& config) {
  if (!config.crypto) return std::shared_ptr<const transport::ClusterKey>();
  auto key = read_key_file(config.keyfile);
  if (key) return std::make_shared<const transport::ClusterKey>(std::move(key).value());
  // The line to fix: the keyfile key if the file names one, else the one that turned crypto on.
  if (config.keyfile_line != 0)
    return Error::make("{}:{}: totem.keyfile: {}", config.path, config.keyfile_line, key.error().message());
  return Error::make("{}:{}: {}: crypto on needs the cluster key: {}", config.path, config.crypto_line,
                     config.crypto_key, key.error().message());
}

std::string crypto_off_warning(const DaemonConfig& config) {
  if (config.crypto) return {};
  return fmt::format(
      "{}: totem.crypto is off: packets travel in the clear and unauthenticated, so any host that "
      "reaches port {} can read them and inject its own (rtotem-keygen, then crypto: on)",
      config.path, config.link0().mcastport);
}

}  // namespace rtotem::config
