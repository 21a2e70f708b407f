#include "wire/message_kind.hpp"

namespace fiber::detail {

std::string_view describe(MessageKind kind) {
  switch (kind) {
    case MessageKind::hello:
      return "a hello message";
    case MessageKind::welcome:
      return "a welcome message";
    case MessageKind::run:
      return "a run message";
    case MessageKind::result:
      return "a result message";
    case MessageKind::heartbeat:
      return "a heartbeat message";
    case MessageKind::drop:
      return "a drop message";
    case MessageKind::park:
      return "a park message";
    case MessageKind::shutdown:
      return "a shutdown message";
    case MessageKind::relay:
      return "a relay message";
    case MessageKind::lane_open:
      return "a lane_open message";
    case MessageKind::lane:
      return "a lane message";
    case MessageKind::lane_lost:
      return "a lane_lost message";
    case MessageKind::lane_kill:
      return "a lane_kill message";
    case MessageKind::replay:
      return "a replay message";
    case MessageKind::probe:
      return "a probe message";
    case MessageKind::standby:
      return "a standby message";
    case MessageKind::keep:
      return "a keep message";
  }
  return "a message of no known kind";
}

}  // namespace fiber::detail
