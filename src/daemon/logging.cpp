#include "src/daemon/logging.hpp"

#include <qb/qblog.h>
#include <syslog.h>

#include <climits>
#include <csignal>
#include <cerrno>
#include <cstring>

namespace rtotem::daemon {
namespace {

std::int32_t g_file_target = -1;
constexpr std::int32_t kFlightRecorderBytes = 1 << 20;  // about 10,000 lines: the last minutes, not a day
// The flight data's path, in a fixed buffer: the fatal-signal handler must not allocate.
char g_flight_data_file[PATH_MAX] = {};

// A fatal signal (a crash, an assertion's abort): the flight data first, then as the signal would
// have ended the process (SA_RESETHAND has put its default action back).
void on_fatal_signal(int signal) {
  if (g_flight_data_file[0] != '\0' && qb_log_ctl(QB_LOG_BLACKBOX, QB_LOG_CONF_STATE_GET, 0) == QB_LOG_STATE_ENABLED)
    qb_log_blackbox_write_to_file(g_flight_data_file);
  raise(signal);
}

void on_fatal_signals() {
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  action.sa_flags = static_cast<int>(SA_RESETHAND);
  sigemptyset(&action.sa_mask);
  // Where AddressSanitizer reports a bad access itself, it keeps SIGSEGV and SIGBUS.
#if defined(__SANITIZE_ADDRESS__)
  constexpr int kSignals[] = {SIGABRT, SIGILL, SIGFPE};
#else
  constexpr int kSignals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE};
#endif
  for (int s : kSignals) sigaction(s, &action, nullptr);
}

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
  qb_log_ctl(QB_LOG_BLACKBOX, QB_LOG_CONF_SIZE, kFlightRecorderBytes);  // before it is enabled
  enable(QB_LOG_BLACKBOX, true, true, true);
  on_fatal_signals();
}

Result<void> logging_apply(const config::LoggingConfig& logging, bool foreground) {
  enable(QB_LOG_STDERR, foreground && logging.to_stderr, logging.debug, logging.timestamp);
  const std::int32_t facility = qb_log_facility2int(logging.syslog_facility.c_str());
  if (facility < 0) return Error::make("logging.syslog_facility: unknown facility '{}'", logging.syslog_facility);
  qb_log_ctl(QB_LOG_SYSLOG, QB_LOG_CONF_FACILITY, facility);
  enable(QB_LOG_SYSLOG, logging.to_syslog, logging.debug, false);  // syslog stamps its own time
  enable(QB_LOG_BLACKBOX, logging.blackbox, true, true);
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

void logging_flight_data_file(const std::string& path) {
  if (path.size() < sizeof g_flight_data_file) std::memcpy(g_flight_data_file, path.c_str(), path.size() + 1);
}

Result<std::string> logging_dump_flight_data() {
  if (g_flight_data_file[0] == '\0') return Error::make("no flight data file (no state dir)");
  if (qb_log_ctl(QB_LOG_BLACKBOX, QB_LOG_CONF_STATE_GET, 0) != QB_LOG_STATE_ENABLED)
    return Error::make("the flight recorder is off (logging.blackbox: off)");
  const ssize_t written = qb_log_blackbox_write_to_file(g_flight_data_file);
  if (written < 0) return Error::sys(static_cast<int>(-written), "flight data file '{}'", g_flight_data_file);
  return std::string(g_flight_data_file);
}

}  // namespace rtotem::daemon
