// The manual pages (docs/man/*.1) against the programs' --help: every flag a command's --help
// lists is in its page and every flag a page documents is in --help, for gpulab-cli, each of its
// commands and their subcommands, and the window; and every page as man renders it: no control
// byte in its source, no warning from groff.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

using Flags = std::set<std::string>;

struct Help {
  Flags flags;                           // --help itself left out: every command has it
  std::vector<std::string> subcommands;  // as "Subcommands:" lists them
};

// CLI11's help ("Options:" then "  -h,--flag TYPE  text") or Qt's ("  -v, --version  text").
Help parse_help(const std::string& text) {
  Help help;
  std::istringstream lines(text);
  std::string line, section;
  const std::regex flag(R"(^  (?:-\w, ?)?(--[A-Za-z0-9-]+))");
  const std::regex subcommand(R"(^  ([a-z][a-z0-9-]*)\s{2,})");
  std::smatch m;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == ':' && line[0] != ' ') section = line;
    if (section == "Options:" && std::regex_search(line, m, flag) && m[1] != "--help")
      help.flags.insert(m[1]);
    if (section == "Subcommands:" && std::regex_search(line, m, subcommand))
      help.subcommands.push_back(m[1]);
  }
  return help;
}

// A page's documented flags by command: the first flag of each .TP item's line, under the page's
// own command until a '.SS "gpulab-cli CMD SUB"' heading starts a subcommand's.
std::map<std::string, Flags> parse_page(const std::filesystem::path& page,
                                        const std::string& command) {
  std::map<std::string, Flags> flags;
  flags[command];
  std::ifstream in(page);
  std::string line, current = command;
  bool item = false;
  const std::regex heading(R"re(^\.SS "(.*)"$)re");
  const std::regex flag(R"(--[A-Za-z0-9-]+)");
  std::smatch m;
  while (std::getline(in, line)) {
    std::string plain = std::regex_replace(line, std::regex(R"(\\-)"), "-");
    if (std::regex_match(plain, m, heading)) {
      current = m[1];
      flags[current];
    } else if (item && std::regex_search(plain, m, flag) && m[0] != "--help") {
      flags[current].insert(m[0]);
    }
    item = line == ".TP";
  }
  return flags;
}

std::string help_of(const std::string& program, const std::string& args) {
  const gpulab::test::CliResult r =
      gpulab::test::run_command("QT_QPA_PLATFORM=offscreen " + program + " " + args + " --help");
  EXPECT_EQ(r.exit_code, 0) << program << " " << args << " --help: " << r.output;
  return r.output;
}

std::string joined(const Flags& flags) {
  std::string text;
  for (const auto& f : flags) text += (text.empty() ? "" : " ") + f;
  return text;
}

// "in --help, not in the page: --x; in the page, not in --help: --y", or "" when they agree.
std::string difference(const Flags& help, const Flags& page) {
  Flags missing, extra;
  for (const auto& f : help)
    if (!page.count(f)) missing.insert(f);
  for (const auto& f : page)
    if (!help.count(f)) extra.insert(f);
  std::string text;
  if (!missing.empty()) text += "in --help, not in the page: " + joined(missing);
  if (!extra.empty())
    text += (text.empty() ? "" : "; ") + ("in the page, not in --help: " + joined(extra));
  return text;
}

const std::filesystem::path kManDir = std::filesystem::path(GPULAB_SOURCE_DIR) / "docs" / "man";

TEST(ManPages, GpulabCliAndEachCommandDocumentExactlyTheFlagsTheirHelpLists) {
  const Help top = parse_help(help_of(GPULAB_CLI_PATH, ""));
  ASSERT_FALSE(top.subcommands.empty());
  EXPECT_EQ(difference(top.flags, parse_page(kManDir / "gpulab-cli.1", "gpulab-cli")["gpulab-cli"]),
            "")
      << "gpulab-cli.1";
  for (const auto& command : top.subcommands) {
    const auto page = kManDir / ("gpulab-cli-" + command + ".1");
    ASSERT_TRUE(std::filesystem::exists(page))
        << "gpulab-cli " << command << " has no manual page: write " << page;
    auto documented = parse_page(page, "gpulab-cli " + command);
    const Help help = parse_help(help_of(GPULAB_CLI_PATH, command));
    EXPECT_EQ(difference(help.flags, documented["gpulab-cli " + command]), "") << page;
    for (const auto& sub : help.subcommands) {
      const std::string name = "gpulab-cli " + command + " " + sub;
      EXPECT_TRUE(documented.count(name)) << page << " has no section .SS \"" << name << "\"";
      EXPECT_EQ(difference(parse_help(help_of(GPULAB_CLI_PATH, command + " " + sub)).flags,
                           documented[name]),
                "")
          << page << ", " << name;
    }
  }
}

TEST(ManPages, TheWindowsPageDocumentsExactlyTheFlagsItsHelpLists) {
#ifndef GPULAB_GUI_PATH
  GTEST_SKIP() << "the window is not built here (no Qt 6 or QCustomPlot)";
#else
  const Help help = parse_help(help_of(GPULAB_GUI_PATH, ""));
  EXPECT_GT(help.flags.size(), 5u);
  EXPECT_EQ(difference(help.flags, parse_page(kManDir / "gpulab.1", "gpulab")["gpulab"]), "");
#endif
}

// Every page in docs/man, in name order.
std::vector<std::filesystem::path> man_pages() {
  std::vector<std::filesystem::path> pages;
  for (const auto& entry : std::filesystem::directory_iterator(kManDir))
    if (entry.path().extension() == ".1") pages.push_back(entry.path());
  std::sort(pages.begin(), pages.end());
  return pages;
}

// "page:line: byte 0x0c" for each control byte (other than the line's end) in a page's source: a
// form feed byte where the escape \fI, \fB or \fR was meant renders as "I/usr/share/...R".
std::string control_bytes(const std::filesystem::path& page) {
  std::ifstream in(page, std::ios::binary);
  std::string line, found;
  for (int number = 1; std::getline(in, line); ++number)
    for (const char c : line) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x20 || byte == 0x7f) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", byte);
        found += page.filename().string() + ":" + std::to_string(number) + ": byte " + hex + "\n";
      }
    }
  return found;
}

// groff's warnings (all of them: -ww) for one page; "" when none. On its default device: the utf8
// one man uses on a terminal passes a form feed through without a word.
gpulab::test::CliResult groff_warnings(const std::filesystem::path& page) {
  return gpulab::test::run_command("groff -man -ww -z '" + page.string() + "'");
}

bool groff_found() { return gpulab::test::run_command("command -v groff").exit_code == 0; }

TEST(ManPages, NoPageHoldsAControlByte) {
  const auto pages = man_pages();
  ASSERT_GE(pages.size(), 10u) << kManDir;
  for (const auto& page : pages) EXPECT_EQ(control_bytes(page), "") << page;
}

TEST(ManPages, EveryPageRendersWithoutAWarning) {
  if (!groff_found())
    GTEST_SKIP() << "groff not found: install groff-base (scripts/setup --tests does)";
  for (const auto& page : man_pages()) {
    const gpulab::test::CliResult r = groff_warnings(page);
    EXPECT_EQ(r.exit_code, 0) << page << ": " << r.output;
    EXPECT_EQ(r.output, "") << page;
  }
}

// The two checks above catch the fault they are for: a page with a form feed where \fI belongs.
TEST(ManPages, AFormFeedInAPageIsCaughtByBothChecks) {
  gpulab::test::TempDir dir;
  const auto page = dir.path() / "broken.1";
  std::ofstream(page) << ".TH BROKEN 1\n.SH NAME\nbroken \\- a page\n.SH FILES\n"
                      << "\fI/usr/share/gpulab\fR\n";
  EXPECT_EQ(control_bytes(page), "broken.1:5: byte 0x0c\nbroken.1:5: byte 0x0c\n");
  if (!groff_found()) GTEST_SKIP() << "groff not found: install groff-base";
  EXPECT_NE(groff_warnings(page).output.find("warning"), std::string::npos);
}

// The comparison itself: a flag missing from a page, and one a page has that --help does not.
TEST(ManPages, AFlagInOneAndNotTheOtherIsNamed) {
  EXPECT_EQ(difference({"--a", "--b"}, {"--a", "--c"}),
            "in --help, not in the page: --b; in the page, not in --help: --c");
  EXPECT_EQ(difference({"--a"}, {"--a"}), "");
  const Help help = parse_help(
      "d\nUsage: x [OPTIONS]\n\nOptions:\n  -h,--help   Print\n  --out TEXT  the file\n"
      "                              more --not-a-flag\n\nSubcommands:\n  run   go\n");
  EXPECT_EQ(joined(help.flags), "--out");
  EXPECT_EQ(help.subcommands, std::vector<std::string>{"run"});
}

}  // namespace
