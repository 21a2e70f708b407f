// Argument and result types: numbers, strings, containers, tuples, user structs, 100 MB.
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <cstdint>
#include <map>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

namespace {

struct Trajectory {
  std::string environment;
  std::vector<float> rewards;
  std::map<std::string, double> info;
  std::int64_t steps = 0;

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& environment& rewards& info& steps;
  }
  bool operator==(const Trajectory&) const = default;
};

enum class Color : std::uint8_t { red = 1, green = 2 };

}  // namespace

Trajectory extend(Trajectory trajectory, int extra_steps) {
  trajectory.steps += extra_steps;
  trajectory.rewards.push_back(static_cast<float>(extra_steps));
  trajectory.info["extended"] = 1.0;
  trajectory.environment += "-extended";
  return trajectory;
}
FIBER_TASK(extend);

std::vector<double> doubled(const std::vector<double>& values) {
  std::vector<double> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = 2 * values[i];
  return out;
}
FIBER_TASK(doubled);

std::tuple<std::string, int, double> describe(const std::pair<std::string, int>& item, Color color,
                                              std::map<int, std::string> names) {
  return {item.first + names[item.second], item.second * 10, color == Color::green ? 0.5 : 1.5};
}
FIBER_TASK(describe);

void nothing(int) {}
FIBER_TASK(nothing);

namespace {

TEST(Serialization, UserStructRoundTrip) {
  fiber::Pool pool({.processes = 1});
  Trajectory in{"CartPole-v1", {1.f, 2.f}, {{"seed", 3.0}}, 7};
  Trajectory expected{
      "CartPole-v1-extended", {1.f, 2.f, 5.f}, {{"seed", 3.0}, {"extended", 1.0}}, 12};
  EXPECT_EQ(pool.apply(extend, in, 5), expected);
  auto many = pool.map(extend, std::vector<std::tuple<Trajectory, int>>(50, {in, 5}));
  EXPECT_EQ(many, std::vector<Trajectory>(50, expected));
}

TEST(Serialization, StringsPairsTuplesEnumsMaps) {
  fiber::Pool pool({.processes = 1});
  auto result = pool.apply(describe, std::pair<std::string, int>{"id-", 4}, Color::green,
                           std::map<int, std::string>{{4, "four"}});
  EXPECT_EQ(result, std::make_tuple(std::string("id-four"), 40, 0.5));
}

TEST(Serialization, VoidTaskViaApply) {
  fiber::Pool pool({.processes = 1});
  auto pending = pool.apply_async(nothing, 3);
  pending.get();
  EXPECT_TRUE(pending.successful());
}

TEST(Serialization, HundredMegabyteVectorRoundTrip) {
  fiber::Pool pool({.processes = 1});
  std::vector<double> big(100'000'000 / sizeof(double));
  std::iota(big.begin(), big.end(), 0.0);
  auto back = pool.apply(doubled, big);
  ASSERT_EQ(back.size(), big.size());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < big.size(); ++i) wrong += back[i] != 2 * big[i];
  EXPECT_EQ(wrong, 0u) << "of " << big.size() << " values";
}

TEST(Serialization, ManyLargeItemsInOneMap) {
  fiber::Pool pool({.processes = 2});
  std::vector<std::vector<double>> items(8, std::vector<double>(200'000, 1.5));
  auto results = pool.map(doubled, items, 3);  // chunks of 3 x 1.6 MB: above the eager size
  ASSERT_EQ(results.size(), items.size());
  for (const auto& result : results) EXPECT_EQ(result, std::vector<double>(200'000, 3.0));
}

}  // namespace
