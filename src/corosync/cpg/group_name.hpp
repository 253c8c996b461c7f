// A CPG group name (length bytes, any bytes) as an rtotem group name (1..128 bytes, no NUL), and
// back. Almost every CPG user counts a terminating NUL in the length ("cib\0"): that name is the
// bytes before the NUL. Any other name (no final NUL, a NUL inside, or a first byte of 0x01) is
// "\x01" followed by its bytes with 0x00 and 0x02 escaped as 0x02 '0' and 0x02 '2'.
#pragma once

#include <corosync/cpg.h>

#include <optional>
#include <string>
#include <string_view>

namespace rtotem::corosync {

// nullopt: the encoded form is longer than an rtotem group name may be.
std::optional<std::string> rtotem_group_name(const cpg_name& name);
// nullopt: not a name rtotem_group_name makes.
std::optional<cpg_name> cpg_group_name(std::string_view rtotem_name);

}  // namespace rtotem::corosync
