// The tools' option parser: each form an option takes, words, numbers, and each refusal by name.
#include "base/cli_args.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace rtotem {
namespace {

constexpr CliOption kOptions[] = {
    {"-f"}, {"--force"}, {"-c", CliValue::kNonEmpty}, {"--count", CliValue::kAny}, {"--key", CliValue::kNonEmpty},
};

// What a tool's loop would see: "name=value" per option, "word" per word, or the first refusal.
std::string read_all(std::vector<std::string> args, CliWords words = CliWords::kRefused) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  std::string seen;
  for (CliReader reader(argv, kOptions, words); !reader.done();) {
    auto arg = reader.next();
    if (!arg) return "error: " + arg.error().message();
    if (!seen.empty()) seen += ' ';
    seen += arg->is_word() ? std::string(arg->value) : fmt::format("{}={}", arg->name, arg->value);
  }
  return seen;
}

TEST(CliReader, ReadsNothingFromNoArguments) { EXPECT_EQ(read_all({}), ""); }

TEST(CliReader, TakesALongOptionsValueFromTheNextArgumentOrAfterEquals) {
  EXPECT_EQ(read_all({"--count", "7"}), "--count=7");
  EXPECT_EQ(read_all({"--count=7"}), "--count=7");
  EXPECT_EQ(read_all({"--count=a=b"}), "--count=a=b");  // only the first '=' splits
}

TEST(CliReader, TakesTheNextArgumentAsTheValueEvenIfItLooksLikeAnOption) {
  EXPECT_EQ(read_all({"--count", "--force"}), "--count=--force");
  EXPECT_EQ(read_all({"-c", "-f"}), "-c=-f");
}

TEST(CliReader, TakesAShortOptionsValueFromTheNextArgument) { EXPECT_EQ(read_all({"-c", "/etc/x"}), "-c=/etc/x"); }

TEST(CliReader, ReadsShortAndLongFlagsWithoutAValue) {
  EXPECT_EQ(read_all({"-f", "--force", "--count", "1"}), "-f= --force= --count=1");
}

TEST(CliReader, AnEmptyValueIsAValueUnlessTheOptionWantsOne) {
  EXPECT_EQ(read_all({"--count="}), "--count=");
  EXPECT_EQ(read_all({"--count", ""}), "--count=");
  EXPECT_EQ(read_all({"--key="}), "error: --key: empty value");
  EXPECT_EQ(read_all({"--key", ""}), "error: --key: empty value");
  EXPECT_EQ(read_all({"-c", ""}), "error: -c: empty value");
}

TEST(CliReader, AMissingValueIsNamed) {
  EXPECT_EQ(read_all({"--count"}), "error: --count: missing value");
  EXPECT_EQ(read_all({"-f", "-c"}), "error: -c: missing value");
}

TEST(CliReader, AFlagGivenAValueIsRefused) { EXPECT_EQ(read_all({"--force=yes"}), "error: --force: takes no value"); }

TEST(CliReader, UnknownOptionsAreRefusedByName) {
  EXPECT_EQ(read_all({"--forse"}), "error: unknown option '--forse'");
  EXPECT_EQ(read_all({"--forse=1"}), "error: unknown option '--forse'");
  EXPECT_EQ(read_all({"-x"}), "error: unknown option '-x'");
  EXPECT_EQ(read_all({"-c=/etc/x"}), "error: unknown option '-c=/etc/x'");  // a short option has no '=' form
  EXPECT_EQ(read_all({"--"}), "error: unknown option '--'");
}

TEST(CliReader, AWordIsRefusedWhereTheToolTakesNone) {
  EXPECT_EQ(read_all({"--force", "status"}), "error: unexpected argument 'status'");
  EXPECT_EQ(read_all({"-"}), "error: unexpected argument '-'");
}

TEST(CliReader, WhereWordsAreTakenAnUnknownShortOneIsAWordButAnUnknownLongOneIsNot) {
  EXPECT_EQ(read_all({"set", "k", "i32", "-5", "-f"}, CliWords::kTaken), "set k i32 -5 -f=");
  EXPECT_EQ(read_all({"-", "status", "--count", "2"}, CliWords::kTaken), "- status --count=2");
  EXPECT_EQ(read_all({"status", "--json"}, CliWords::kTaken), "error: unknown option '--json'");
}

TEST(ParseNumber, ReadsDecimalAndHexWithinTheRange) {
  EXPECT_EQ(*parse_number<std::uint32_t>("--n", "0", 0, 10), 0u);
  EXPECT_EQ(*parse_number<std::uint32_t>("--n", "10", 0, 10), 10u);
  EXPECT_EQ(*parse_number<std::uint16_t>("--port", "0x1f", 1, 65535), 31u);
  EXPECT_EQ(*parse_number<std::uint64_t>("--seed", "0XFFFFFFFFFFFFFFFF", 0, std::numeric_limits<std::uint64_t>::max()),
            std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(*parse_number<double>("--loss", "0.25", 0, 1), 0.25);
  EXPECT_EQ(*parse_number<double>("--rate", "1e3", 1e-3, 1e6), 1000);
}

std::string refusal(Result<std::uint32_t> parsed) { return parsed ? "<ok>" : parsed.error().message(); }
std::string refusal(Result<double> parsed) { return parsed ? "<ok>" : parsed.error().message(); }

TEST(ParseNumber, WhatIsNotANumberIsNamedWithItsOption) {
  for (const char* text : {"", "x", "12x", "-1", "+1", " 1", "1.5", "0x", "0xg"})
    EXPECT_EQ(refusal(parse_number<std::uint32_t>("--count", text, 0, 100)),
              fmt::format("--count: '{}' is not a number", text));
  for (const char* text : {"", "x", "0.5s", "nan", "inf", "0x1p3"})
    EXPECT_EQ(refusal(parse_number<double>("--loss", text, 0, 1)), fmt::format("--loss: '{}' is not a number", text));
}

TEST(ParseNumber, ANumberOutsideTheRangeIsNamedWithTheRange) {
  EXPECT_EQ(refusal(parse_number<std::uint32_t>("--count", "0", 1, 100)), "--count: 0 is out of range [1, 100]");
  EXPECT_EQ(refusal(parse_number<std::uint32_t>("--count", "101", 1, 100)), "--count: 101 is out of range [1, 100]");
  EXPECT_EQ(refusal(parse_number<std::uint32_t>("--count", "0x65", 1, 100)), "--count: 0x65 is out of range [1, 100]");
  EXPECT_EQ(refusal(parse_number<std::uint32_t>("--count", "99999999999999999999999", 1, 100)),
            "--count: 99999999999999999999999 is out of range [1, 100]");
  EXPECT_EQ(refusal(parse_number<double>("--loss", "-0.1", 0, 1)), "--loss: -0.1 is out of range [0, 1]");
  EXPECT_EQ(refusal(parse_number<double>("--loss", "1.5", 0, 1)), "--loss: 1.5 is out of range [0, 1]");
}

TEST(ParseNumber, TheRangeOfTheTypeBoundsWhatFits) {
  EXPECT_EQ(*parse_number<std::uint16_t>("--port", "65535", 1, 65535), 65535u);
  auto too_big = parse_number<std::uint16_t>("--port", "65536", 1, 65535);
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().message(), "--port: 65536 is out of range [1, 65535]");
}

}  // namespace
}  // namespace rtotem
