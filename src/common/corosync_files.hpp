// Where an existing Corosync cluster keeps its files, and the rule by which rtotem reads them: a
// file of rtotem's own wins where it exists, else Corosync's is read where that exists, so a node
// moved from Corosync runs from its /etc/corosync as it is.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace rtotem {

inline constexpr std::string_view kCorosyncConfigFile = "/etc/corosync/corosync.conf";
inline constexpr std::string_view kCorosyncKeyFile = "/etc/corosync/authkey";

// The first of `paths` that exists (stat succeeds), else the first, whose absence its reader
// then reports.
std::string first_existing(std::initializer_list<std::string_view> paths);

}  // namespace rtotem
