// Parsing rtotem-keygen's command line, and its --help text.
#include "src/tools/keygen_options.hpp"

#include <fmt/format.h>

#include "base/cli_args.hpp"
#include "src/common/key_file.hpp"

namespace rtotem::tools {

std::string keygen_usage() {
  return fmt::format(
      "NAME\n"
      "  rtotem-keygen - make the cluster key that seals rtotem's packets\n"
      "\n"
      "SYNOPSIS\n"
      "  rtotem-keygen [-k PATH | --key PATH] [--force]\n"
      "\n"
      "DESCRIPTION\n"
      "  Writes {} random bytes (libsodium randombytes, from getrandom) to PATH, mode 0400, owned by\n"
      "  the user running it. With totem {{ crypto: on }} every rtotemd of a cluster seals each packet\n"
      "  with this key (XChaCha20-Poly1305) and drops packets it cannot open: make the key once, on\n"
      "  one node, and copy it to the same path on every node (e.g. scp -p, then check the mode is\n"
      "  0400 and the owner the daemon's user). rtotemd refuses a key file of another size or one\n"
      "  that group or others can access.\n"
      "\n"
      "  The key appears whole or not at all: it is written to a temp file in the same directory,\n"
      "  synced, then linked (or, with --force, renamed) into place.\n"
      "\n"
      "OPTIONS\n"
      "  -k, --key PATH   where to write the key (default {}; the directory must exist)\n"
      "  --force          replace an existing file at PATH; without it an existing key is never\n"
      "                   touched. A replaced key must reach every node before they restart.\n"
      "  -h, --help       this text\n"
      "\n"
      "EXIT STATUS\n"
      "  0 the key was written; 1 it was not (the message says why); 2 bad arguments\n",
      transport::kClusterKeySize, kDefaultKeyFile);
}

Result<KeygenOptions> parse_keygen_options(std::span<char* const> args) {
  constexpr CliOption kOptions[] = {
      {"--force"}, {"-h"}, {"--help"}, {"-k", CliValue::kNonEmpty}, {"--key", CliValue::kNonEmpty}};
  KeygenOptions out;
  out.path = kDefaultKeyFile;
  for (CliReader reader(args, kOptions); !reader.done();) {
    auto arg = reader.next();
    if (!arg) return arg.error();
    if (arg->name == "--force") {
      out.force = true;
    } else if (arg->name == "-h" || arg->name == "--help") {
      out.help = true;
    } else {
      out.path = arg->value;  // -k or --key
    }
  }
  return out;
}

}  // namespace rtotem::tools
