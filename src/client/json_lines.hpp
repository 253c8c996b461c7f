// Flattens rtotemd's JSON answers into "key: value" lines for people (rtotemctl without --json):
// nested objects become dotted keys, arrays one line. Input that is not JSON is returned as is.
#pragma once

#include <string>
#include <string_view>

namespace rtotem::client {

std::string json_lines(std::string_view json);

}  // namespace rtotem::client
