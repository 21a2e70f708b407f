// The stop request: a signal is recorded, not fatal, and names itself.
#include "run/stop_request.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <string>

namespace fiber::rl {

TEST(StopRequest, NothingBeforeASignal) {
  install_stop_handlers();
  EXPECT_FALSE(stop_requested());
  EXPECT_EQ(std::string(stop_signal_name()), "");
}

TEST(StopRequest, SigtermIsRecordedAndTheProcessGoesOn) {
  install_stop_handlers();
  install_stop_handlers();  // twice is harmless
  ASSERT_EQ(std::raise(SIGTERM), 0);
  EXPECT_TRUE(stop_requested());
  EXPECT_EQ(std::string(stop_signal_name()), "SIGTERM");
  ASSERT_EQ(std::raise(SIGINT), 0);  // a second signal does not kill either
  EXPECT_TRUE(stop_requested());
  EXPECT_EQ(std::string(stop_signal_name()), "SIGINT");
}

}  // namespace fiber::rl
