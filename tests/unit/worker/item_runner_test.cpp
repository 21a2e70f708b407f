// ItemRunner (item_runner.hpp): each item's outcome as a record: a result, a task's exception
// with its type and message, an unknown task's error.
#include "worker/item_runner.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "fiber/task.hpp"
#include "support/run_bodies.hpp"

namespace {

using fiber::Bytes;
using fiber::detail::ItemRunner;
using fiber::detail::RunBody;

std::string greet(std::string name) { return "hello " + name; }
FIBER_TASK(greet);

std::string refuse(std::string why) { throw std::invalid_argument(why); }
FIBER_TASK(refuse);

std::string throw_number(std::string) { throw 42; }
FIBER_TASK(throw_number);

Bytes argument(const std::string& text) { return fiber::call(greet, text).arguments; }

std::vector<fiber::unit::ItemOutcome> run_all(const Bytes& body) {
  RunBody run(body);
  ItemRunner runner;
  Bytes records;
  for (std::uint32_t i = 0; i < run.count(); ++i) runner.run(run, i, records);
  return fiber::unit::read_records(records, run.count());
}

TEST(ItemRunner, ARegisteredTaskRunsEachItem) {
  auto outcomes = run_all(fiber::unit::run_body("greet", {argument("ann"), argument("bo")}));
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_TRUE(outcomes[0].ok);
  EXPECT_EQ(fiber::decode<std::string>(outcomes[0].bytes), "hello ann");
  EXPECT_EQ(fiber::decode<std::string>(outcomes[1].bytes), "hello bo");
}

TEST(ItemRunner, AThrowingTaskGivesAFailedRecordWithTypeAndMessage) {
  auto outcomes = run_all(fiber::unit::run_body("refuse", {argument("no seed")}));
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_FALSE(outcomes[0].ok);
  auto error = fiber::unit::read_error(outcomes[0]);
  EXPECT_EQ(error.type, "std::invalid_argument");
  EXPECT_EQ(error.message, "no seed");
}

TEST(ItemRunner, ANonStandardExceptionIsNamedByItsType) {
  auto error =
      fiber::unit::read_error(run_all(fiber::unit::run_body("throw_number", {argument("")}))[0]);
  EXPECT_EQ(error.type, "int");
  EXPECT_EQ(error.message, "(not a std::exception)");
}

TEST(ItemRunner, ArgumentsThatDoNotDecodeFailTheItemAlone) {
  auto outcomes = run_all(fiber::unit::run_body("greet", {Bytes{'x'}, argument("cy")}));
  EXPECT_FALSE(outcomes[0].ok);
  EXPECT_FALSE(fiber::unit::read_error(outcomes[0]).message.empty());
  EXPECT_TRUE(outcomes[1].ok);
  EXPECT_EQ(fiber::decode<std::string>(outcomes[1].bytes), "hello cy");
}

TEST(ItemRunner, AnUnknownTaskGivesItsErrorForEveryItem) {
  auto outcomes = run_all(fiber::unit::run_body("nowhere", {argument("a"), argument("b")}));
  ASSERT_EQ(outcomes.size(), 2u);
  for (const auto& outcome : outcomes) {
    EXPECT_FALSE(outcome.ok);
    auto error = fiber::unit::read_error(outcome);
    EXPECT_EQ(error.type, "fiber::UnknownTask");
    EXPECT_EQ(error.message,
              "no task named 'nowhere' is registered in this worker; register it with "
              "FIBER_TASK(nowhere) at namespace scope, before fiber::Runtime starts");
  }
}

TEST(ItemRunner, RunsAnotherTaskAfterTheOneItRemembers) {
  ItemRunner runner;
  Bytes greeting = fiber::unit::run_body("greet", {argument("di")});
  Bytes refusal = fiber::unit::run_body("refuse", {argument("stop")});
  Bytes records;
  runner.run(RunBody(greeting), 0, records);
  runner.run(RunBody(refusal), 0, records);
  runner.run(RunBody(greeting), 0, records);
  auto outcomes = fiber::unit::read_records(records, 3);
  EXPECT_TRUE(outcomes[0].ok);
  EXPECT_FALSE(outcomes[1].ok);
  EXPECT_TRUE(outcomes[2].ok);
}

}  // namespace
