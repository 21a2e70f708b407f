// fiberrun's argument handling (fiberrun/mpirun_command.hpp) against Open MPI 4.1's own option
// table, captured from `mpirun --help all` (fixtures/mpirun_help_all.txt).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fiberrun/mpirun_command.hpp"

namespace {

using fiberrun::CommandLine;
using fiberrun::OptionTable;
using Words = std::vector<std::string>;

const std::vector<std::string> kSupervisor{"/bin/fiberrun", "--fiberrun-supervise-rank", "/tmp/s"};

OptionTable captured_table() {
  std::ifstream help(std::string(FIBER_UNIT_FIXTURES) + "/mpirun_help_all.txt");
  std::stringstream text;
  text << help.rdbuf();
  return fiberrun::parse_option_table(text.str());
}

CommandLine split(Words words, const std::optional<OptionTable>& table = captured_table()) {
  std::vector<char*> arguments;
  for (auto& word : words) arguments.push_back(word.data());
  return fiberrun::split_at_program(arguments, table);
}

Words command_for(const Words& words) {
  return fiberrun::mpirun_command(split(words), kSupervisor);
}

Words with_supervisor(Words before, const Words& program) {
  before.insert(before.end(), kSupervisor.begin(), kSupervisor.end());
  before.insert(before.end(), program.begin(), program.end());
  return before;
}

TEST(MpirunOptionTable, ParsesEveryNameOfAnOptionWithItsValueCount) {
  OptionTable table = captured_table();
  EXPECT_GT(table.size(), 100u);
  EXPECT_EQ(table.at("np"), 1);
  EXPECT_EQ(table.at("c"), 1);
  EXPECT_EQ(table.at("n"), 1);
  EXPECT_EQ(table.at("mca"), 2);
  EXPECT_EQ(table.at("x"), 1);
  EXPECT_EQ(table.at("host"), 1);
  EXPECT_EQ(table.at("H"), 1);
  EXPECT_EQ(table.at("oversubscribe"), 0);
  EXPECT_EQ(table.at("allow-run-as-root"), 0);
  EXPECT_EQ(table.at("wdir"), 1);
}

TEST(MpirunOptionTable, IgnoresLinesThatAreNotOptions) {
  EXPECT_TRUE(fiberrun::parse_option_table("mpirun (Open MPI) 4.1.4\n\nUsage: mpirun\n").empty());
  OptionTable table = fiberrun::parse_option_table("   -v|--verbose   Be verbose\n  - \n");
  EXPECT_EQ(table, (OptionTable{{"v", 0}, {"verbose", 0}}));
}

TEST(SplitAtProgram, OptionsAndTheirValuesComeBeforeTheProgram) {
  CommandLine line = split(
      {"--mca", "btl", "self", "-x", "SEED=1", "--oversubscribe", "./app", "--mca", "-n", "3"});
  EXPECT_EQ(line.mpirun_options,
            (Words{"--mca", "btl", "self", "-x", "SEED=1", "--oversubscribe"}));
  EXPECT_EQ(line.program, (Words{"./app", "--mca", "-n", "3"}));
}

TEST(SplitAtProgram, ASeparatorEndsTheOptions) {
  CommandLine line = split({"--wdir", "/tmp", "--", "-app-looking-program", "x"});
  EXPECT_EQ(line.mpirun_options, (Words{"--wdir", "/tmp"}));
  EXPECT_EQ(line.program, (Words{"-app-looking-program", "x"}));
  CommandLine alone = split({"--", "./app"});
  EXPECT_TRUE(alone.mpirun_options.empty());
  EXPECT_EQ(alone.program, Words{"./app"});
}

TEST(SplitAtProgram, AnUnknownOptionTakesNoValueAndReachesMpirun) {
  CommandLine line = split({"--no-such-option", "./app"});
  EXPECT_EQ(line.mpirun_options, Words{"--no-such-option"});
  EXPECT_EQ(line.program, Words{"./app"});
}

TEST(SplitAtProgram, WithoutATableOnlyASeparatorWorks) {
  CommandLine line = split({"-n", "2", "--", "./app"}, std::nullopt);
  EXPECT_EQ(line.mpirun_options, (Words{"-n", "2"}));
  EXPECT_EQ(line.program, Words{"./app"});
  EXPECT_EQ(split({"./app", "-n", "2"}, std::nullopt).program, (Words{"./app", "-n", "2"}));
  EXPECT_THROW(split({"-n", "2", "./app"}, std::nullopt), fiberrun::UsageError);
}

TEST(SplitAtProgram, NoProgramIsAUsageErrorUnlessAnAppfileNamesIt) {
  EXPECT_THROW(split({"-n", "2"}), fiberrun::UsageError);
  EXPECT_THROW(split({"-n", "2", "--"}), fiberrun::UsageError);
  try {
    split({"--"});
    FAIL() << "no error";
  } catch (const fiberrun::UsageError& error) {
    EXPECT_STREQ(error.what(), "fiberrun: no program after --");
  }
  CommandLine appfile = split({"--app", "jobs.txt"});
  EXPECT_TRUE(appfile.program.empty());
  EXPECT_EQ(fiberrun::mpirun_command(appfile, kSupervisor), (Words{"mpirun", "--app", "jobs.txt"}));
}

TEST(MpirunCommand, StartsOneProcessUnlessTheOptionsGiveACount) {
  EXPECT_EQ(command_for({"./app", "-v"}), with_supervisor({"mpirun", "-n", "1"}, {"./app", "-v"}));
  EXPECT_EQ(command_for({"-np", "4", "./app"}), with_supervisor({"mpirun", "-np", "4"}, {"./app"}));
  EXPECT_EQ(command_for({"--npernode", "2", "./app"}),
            with_supervisor({"mpirun", "--npernode", "2"}, {"./app"}));
  EXPECT_EQ(command_for({"--map-by", "ppr:2:node", "./app"}),
            with_supervisor({"mpirun", "--map-by", "ppr:2:node"}, {"./app"}));
  EXPECT_EQ(command_for({"--map-by", "node", "./app"}),
            with_supervisor({"mpirun", "--map-by", "node", "-n", "1"}, {"./app"}));
}

TEST(NamesHosts, HostOptionsMeanTheJobMaySpanMachines) {
  EXPECT_TRUE(fiberrun::names_hosts(split({"--host", "a,b", "./app"})));
  EXPECT_TRUE(fiberrun::names_hosts(split({"-H", "a", "./app"})));
  EXPECT_TRUE(fiberrun::names_hosts(split({"--hostfile", "hosts", "./app"})));
  EXPECT_FALSE(fiberrun::names_hosts(split({"-x", "host", "./app", "--host", "b"})));
}

}  // namespace
