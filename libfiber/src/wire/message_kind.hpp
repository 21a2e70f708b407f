// The kinds of message between the master and a worker: what each one's header says it is
// (channel.hpp), and so how its body reads (messages.hpp; run and result bodies are entry lists:
// entry_list.hpp). The values are on the wire: new kinds go at the end.
#pragma once

#include <cstdint>
#include <string_view>

namespace fiber::detail {

enum class MessageKind : std::uint32_t {
  hello = 1,  // worker -> master: Hello
  welcome,    // master -> worker: Welcome
  run,        // master -> worker: a list of run entries (run_entry.hpp), each one chunk of a job
  result,     // worker -> master: a list of result entries (result_entry.hpp); one per chunk
  heartbeat,  // worker -> master, nothing else: alive, while it runs a chunk or asked (probe)
  drop,       // master -> worker, nothing else: answer queued chunks as cancelled (terminated)
  park,       // master -> worker, nothing else: no pool holds you; free what you can and sleep
  shutdown,   // master -> worker: Shutdown
  relay,      // master -> worker, and between the workers of one spawn: Relay
  lane_open,  // master -> worker: LaneOpen
  lane,       // worker -> master: LaneAnswer
  lane_lost,  // worker -> master: LaneLost
  lane_kill,  // master -> worker: LaneKill
  replay,     // master -> worker: Replay
  probe,      // master -> worker, nothing else: answer with a heartbeat if your node daemon lives
  standby,    // worker -> master: StandbyReady
  keep,       // master -> worker, nothing else: the initializer your standby ran is this pool's
};

// How an error names a message of this kind: "a lane_kill message".
std::string_view describe(MessageKind kind);

}  // namespace fiber::detail
