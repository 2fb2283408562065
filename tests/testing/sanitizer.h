// Whether the tests run under AddressSanitizer, where code is several times slower: a test
// that checks a time limit on a large graph can only hold its timing in a normal build.
#pragma once

namespace remat::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace remat::testing
