// Backoff: which way a pause waits after how much quiet, at the boundaries of its three regimes.
#include "backoff.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace {

using namespace std::chrono_literals;
using fiber::detail::Backoff;
using Regime = Backoff::Regime;

constexpr auto kSpinFor = 10ms;
constexpr auto kMaxSleep = 1ms;

TEST(Backoff, BusyPollsRightAfterActivity) {
  Backoff backoff(kSpinFor, kMaxSleep);
  EXPECT_EQ(backoff.pause_after(0ns, kMaxSleep).regime, Regime::busy_poll);
  EXPECT_EQ(backoff.pause_after(Backoff::kBusyPoll - 1ns, kMaxSleep).regime, Regime::busy_poll);
}

TEST(Backoff, YieldsFromTheEndOfBusyPollingUntilSpinFor) {
  Backoff backoff(kSpinFor, kMaxSleep);
  EXPECT_EQ(backoff.pause_after(Backoff::kBusyPoll, kMaxSleep).regime, Regime::yield);
  EXPECT_EQ(backoff.pause_after(kSpinFor - 1ns, kMaxSleep).regime, Regime::yield);
}

TEST(Backoff, SleepsAFractionOfTheQuietTimeCappedAfterSpinFor) {
  Backoff backoff(kSpinFor, kMaxSleep);
  Backoff::Pause at_spin_for = backoff.pause_after(kSpinFor, kMaxSleep);
  EXPECT_EQ(at_spin_for.regime, Regime::sleep);
  EXPECT_EQ(at_spin_for.sleep, Backoff::Clock::duration(kSpinFor) / Backoff::kSleepFraction);
  // The cap is reached at kSleepFraction times it, and holds after.
  EXPECT_EQ(backoff.pause_after(kMaxSleep * Backoff::kSleepFraction, kMaxSleep).sleep, kMaxSleep);
  EXPECT_EQ(backoff.pause_after(1h, kMaxSleep).sleep, kMaxSleep);
  // Another cap for the same quiet (a parked worker sleeps longer).
  EXPECT_EQ(backoff.pause_after(1h, 25ms).sleep, 25ms);
}

TEST(Backoff, NoSpinningSleepsOnceBusyPollingEnds) {
  Backoff backoff(0ns, kMaxSleep);
  EXPECT_EQ(backoff.pause_after(Backoff::kBusyPoll - 1ns, kMaxSleep).regime, Regime::busy_poll);
  EXPECT_EQ(backoff.pause_after(Backoff::kBusyPoll, kMaxSleep).regime, Regime::sleep);
}

}  // namespace
