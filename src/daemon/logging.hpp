// rtotemd's log targets (libqb qb_log: stderr, syslog, a file), set from the config's logging
// section; applied again on SIGHUP.
#pragma once

#include "src/daemon/config/daemon_config.hpp"

namespace rtotem::daemon {

void logging_init();
// `foreground`: stderr is a terminal or systemd's journal; a daemonized process has none.
Result<void> logging_apply(const config::LoggingConfig& logging, bool foreground);
void logging_fini();

}  // namespace rtotem::daemon
