#include "dispatch/silence_watch.hpp"

namespace fiber::detail {

Clock::duration SilenceWatch::allowed(Clock::duration worker_timeout, Clock::time_point now) {
  if (scale_ > 1 && now - last_loss_ > kCalmAfter * worker_timeout) scale_ = 1;
  return worker_timeout * scale_;
}

bool SilenceWatch::on_loss(Clock::time_point now, Clock::duration timeout) {
  // (Workers found silent at the same moment, e.g. those of one lost node, are one event.)
  bool close_to_last = last_loss_ != Clock::time_point{} && now != last_loss_ &&
                       now - last_loss_ < kCloseLosses * timeout;
  last_loss_ = now;
  if (!close_to_last || scale_ >= kMaxScale) return false;
  scale_ *= 2;
  return true;
}

}  // namespace fiber::detail
