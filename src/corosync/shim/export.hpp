// The drop-in libraries export only Corosync's functions (their version scripts name them too).
#pragma once

#define CS_EXPORT extern "C" __attribute__((visibility("default")))
