// Text from a file or a user, made safe to print: in double quotes, with control characters
// and bytes that are not UTF-8 escaped, so that a name cannot move the terminal's cursor or
// split a message across lines.
#pragma once

#include <string>

namespace remat {

// `text` as a JSON string literal ("a\nb" for a, newline, b).
std::string Quoted(const std::string& text);
// The same without the quotes, for names printed inside other text.
std::string Printable(const std::string& text);

}  // namespace remat
