//go:build cgo && libsnappy

// The version of the libsnappy headers this binary was built against (the C binding
// has no version call; the C++ header has the macros).
#include <snappy-stubs-public.h>

extern "C" int streamsim_snappy_version(void) { return SNAPPY_VERSION; }
