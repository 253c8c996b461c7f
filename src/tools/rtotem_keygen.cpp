// rtotem-keygen: writes a fresh cluster key (see --help).
#include <fmt/format.h>

#include "base/cli_args.hpp"
#include "src/common/key_file.hpp"
#include "src/tools/keygen_options.hpp"

int main(int argc, char** argv) {
  using namespace rtotem;
  const std::span<char* const> args = cli_arguments(argc, argv);
  auto options = tools::parse_keygen_options(args);
  if (!options) {
    fmt::print(stderr, "rtotem-keygen: {}\n(rtotem-keygen --help says more)\n", options.error().message());
    return 2;
  }
  if (options->help) {
    fmt::print("{}", tools::keygen_usage());
    return 0;
  }
  if (auto written = write_key_file(options->path, options->force); !written) {
    fmt::print(stderr, "rtotem-keygen: {}\n", written.error().message());
    return 1;
  }
  fmt::print(
      "rtotem-keygen: wrote a {}-byte cluster key to {} (mode 0400); copy it to the same path on every "
      "node\n",
      transport::kClusterKeySize, options->path);
  return 0;
}
