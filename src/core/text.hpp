// The one reader of numbers and lists in text a user wrote: option values (--rates 1,2,4, --context 8000:500,
// --gemm MxNxK, --disaggregate P:D), CSV cells, query constants and config integers. Decimal only, nothing around
// the value and no empty item, so that the same text means the same number everywhere: "010" is not read as 10 in
// one place and 8 in another, "0x10" and " 5" are not numbers, and "1,,2" is not a list of two.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bitline {

/// A whole number in plain decimal: an optional '-', then digits with no leading zero ("0" itself excepted); no '+',
/// blank, base prefix, fraction or exponent. False for anything else, or a number past int64.
bool parse_decimal_integer(std::string_view s, int64_t& out);
/// A finite number in decimal notation: an optional '-', digits (no leading zero before another digit: "010" but not
/// "0.5"), an optional fraction and exponent (e[+-]N); no '+', blank, base prefix, "inf" or "nan". False otherwise.
bool parse_decimal_number(std::string_view s, double& out);

/// The items of `text` separated by `sep`. ConfigError naming `what` and the text for an empty item ("", ",", "a,,b",
/// "a,") or an item with blanks around it (" a").
std::vector<std::string> split_list(std::string_view text, char sep, std::string_view what);

}  // namespace bitline
