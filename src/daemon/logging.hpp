// rtotemd's log targets (libqb qb_log: stderr, syslog, a file), set from the config's logging
// section; applied again on SIGHUP. And the flight recorder (libqb's blackbox, logging.blackbox):
// the last lines at debug and above kept in memory, whatever the other targets log, written to
// its file on request (runtime.blackbox.dump_flight_data) and on a fatal signal, for qb-blackbox.
#pragma once

#include <string>

#include "src/daemon/config/daemon_config.hpp"

namespace rtotem::daemon {

void logging_init();
// `foreground`: stderr is a terminal or systemd's journal; a daemonized process has none.
Result<void> logging_apply(const config::LoggingConfig& logging, bool foreground);
void logging_fini();
// Where the flight data goes: <state dir>/fdata (corosync-blackbox reads /var/lib/corosync/fdata).
void logging_flight_data_file(const std::string& path);
Result<std::string> logging_dump_flight_data();  // the file written

}  // namespace rtotem::daemon
