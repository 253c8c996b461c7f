#include "src/daemon/logging.hpp"

#include <qb/qblog.h>
#include <syslog.h>

#include <cerrno>

namespace rtotem::daemon {
namespace {

std::int32_t g_file_target = -1;

void enable(std::int32_t target, bool on, bool debug, bool timestamp) {
  qb_log_filter_ctl(target, QB_LOG_FILTER_CLEAR_ALL, QB_LOG_FILTER_FILE, "*", LOG_TRACE);
  if (on) qb_log_filter_ctl(target, QB_LOG_FILTER_ADD, QB_LOG_FILTER_FILE, "*", debug ? LOG_DEBUG : LOG_INFO);
  qb_log_format_set(target, timestamp ? "%t [%P] %p %b" : "[%P] %p %b");
  qb_log_ctl(target, QB_LOG_CONF_ENABLED, on ? QB_TRUE : QB_FALSE);
}

}  // namespace

void logging_init() {
  qb_log_init("rtotemd", LOG_DAEMON, LOG_INFO);
  qb_log_ctl(QB_LOG_SYSLOG, QB_LOG_CONF_ENABLED, QB_FALSE);
  enable(QB_LOG_STDERR, true, false, true);
}

Result<void> logging_apply(const config::LoggingConfig& logging, bool foreground) {
  enable(QB_LOG_STDERR, foreground && logging.to_stderr, logging.debug, logging.timestamp);
  const std::int32_t facility = qb_log_facility2int(logging.syslog_facility.c_str());
  if (facility < 0) return Error::make("logging.syslog_facility: unknown facility '{}'", logging.syslog_facility);
  qb_log_ctl(QB_LOG_SYSLOG, QB_LOG_CONF_FACILITY, facility);
  enable(QB_LOG_SYSLOG, logging.to_syslog, logging.debug, false);  // syslog stamps its own time
  if (g_file_target >= 0) {
    qb_log_file_close(g_file_target);
    g_file_target = -1;
  }
  if (logging.to_logfile) {
    g_file_target = qb_log_file_open(logging.logfile.c_str());
    if (g_file_target < 0) return Error::sys(-g_file_target, "logging.logfile '{}'", logging.logfile);
    enable(g_file_target, true, logging.debug, logging.timestamp);
  }
  return {};
}

void logging_fini() { qb_log_fini(); }

}  // namespace rtotem::daemon
