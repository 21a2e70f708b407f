// The messages between the master and a worker, and a Channel that sends and receives them over
// one intercommunicator.
//
// A message is a MessageHeader followed by a body. Run and result bodies are lists: each entry a
// u64 size and then one chunk's body, so that several small chunks (or their results) travel in
// one MPI message. A message of up to kEagerBytes travels as one
// MPI message on kHeaderTag; a larger one sends the header alone (body_follows set) and then the
// body on kBodyTag in pieces of at most kPieceBytes (MPI counts are ints), which the receiver
// gathers into one buffer. Every Run gets exactly one Result.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fiber/serialization.hpp"
#include "mpi/request.hpp"
#include "wire/protocol_error.hpp"

namespace fiber::detail {

class LaneDoorbellRing;

enum class MessageKind : std::uint32_t {
  hello = 1,  // worker -> master: pid, host
  welcome,    // master -> worker: the worker's id
  run,        // master -> worker: one chunk of a job
  result,     // worker -> master: the outcome of one chunk
  heartbeat,  // worker -> master: alive, while it runs a chunk
  drop,       // master -> worker: answer queued chunks as cancelled (pool terminated)
  park,       // master -> worker: no pool holds you; free what you can and sleep
  shutdown,   // master -> worker: u32 disconnect (0: a sibling was lost, leave without); exit
  // master -> worker: a route (u32 count, count RelayHop), then one run entry (a broadcast): the
  // worker forwards the entry along the route (kRelayTag, dispatch/broadcast_routes.hpp) and runs
  // it too. Between workers (kRelayTag) the same: a route, possibly empty, then the entry.
  relay,
  // The lane (docs/design.md, "The lane"): the master writes a worker's chunks into its task
  // process's rings and reads the answers itself, the worker only watches the task process.
  // master -> worker: u64 lane, u32 heartbeat_ms. Once the chunks sent before are answered, the
  // worker has a task process running (a new one replays what the master wrote into no lane) and
  // answers `lane`; it then writes nothing into the rings, and heartbeats while they hold work.
  lane_open,
  // worker -> master: u64 lane, i32 descriptor of the task process's memory in the worker
  // (task_memory.hpp), or -1 and a reason (u32 size + text) if it could not.
  lane,
  // worker -> master: u64 lane, a reason: the lane's task process died (or was killed, asked).
  lane_lost,
  // master -> worker: u64 lane, u64 chunk id, u32 item: kill the lane's task process if it still
  // runs that item (it ran past its timeout); its death is reported as lane_lost.
  lane_kill,
  // master -> worker: u64 lane, then an initializer's or broadcast's run entry that the master
  // wrote into that lane: kept to replay in the task processes of later lanes.
  replay,
};

// One hop of a relay's route: a rank of the relay's spawn, and how many of the hops after it that
// rank forwards to itself (its own route; 0 for a sibling that only runs the entry).
struct RelayHop {
  std::int32_t rank;
  std::uint32_t descendants;
};

struct MessageHeader {
  MessageKind kind;
  std::uint32_t body_follows;
  std::uint64_t body_size;
};

// RunHeader::flags
inline constexpr std::uint32_t kRunIsolated = 1;  // run in the worker's task process
// A pool's initializer (starts a fresh task process) and a pool's broadcast calls: replayed, in
// order, in every new task process; a broadcast replaces the previous one of the same task.
inline constexpr std::uint32_t kRunInitializer = 2;
inline constexpr std::uint32_t kRunBroadcast = 4;
// A broadcast whose body comes from another worker of the spawn (a relay): this entry holds one
// item, the first relay's u64 chunk id, and stands in the queue until a relay's copy arrives.
inline constexpr std::uint32_t kRunFromRelay = 8;
// The whole body of an entry sent before with kRunFromRelay, sent by the master itself because
// the relay was lost; ignored if the relay's copy came first.
inline constexpr std::uint32_t kRunRelayFallback = 16;

// Body of a run message: RunHeader, task name, count + 1 item offsets (relative to the first
// item), the items' bytes.
struct RunHeader {
  std::uint64_t chunk_id;
  std::uint32_t name_size;
  std::uint32_t count;
  std::uint32_t flags;
  std::uint32_t timeout_ms;  // per item; 0: none
  // Chunks of tasks a task process runs before a fresh one replaces it (maxtasksperchild); 0: no
  // limit.
  std::uint32_t tasks_per_process = 0;
  // The longest silence of a worker running this chunk: it sends a heartbeat after that long
  // (the pool's worker_timeout / kHeartbeatsPerWorkerTimeout).
  std::uint32_t heartbeat_ms = 0;
};

// Heartbeats a busy worker sends per worker_timeout of silence: enough that a late one or two do
// not make it look lost, few enough that a task shorter than worker_timeout / this sends none
// (the default 10 s gives 1.25 s: the paper's 0.92 s ES tasks cost the master no heartbeat).
inline constexpr int kHeartbeatsPerWorkerTimeout = 8;

// How a chunk ended (ResultHeader::status).
enum class ChunkStatus : std::uint32_t {
  complete = 0,
  cancelled,  // dropped unrun (pool terminated)
  crashed,    // the task process died running item `failed_item`; the reason follows the items
  timed_out,  // item `failed_item` passed its deadline and was killed; the reason follows
  not_run,    // its task process died before reaching it: send it again, nothing counted
};

// Body of a result message: ResultHeader, count ItemStatus, the items' bytes back to back, and
// for crashed and timed_out a reason (u32 size + text). A failed item's bytes are its error:
// u32 size + type name, u32 size + message. When a task process dies, the items from `count` on
// have no result: `failed_item` is the one it died running (count <= failed_item).
struct ResultHeader {
  std::uint64_t chunk_id;
  std::uint32_t count;
  ChunkStatus status;
  std::uint64_t elapsed_ns;  // time spent running the chunk's items
  std::uint32_t failed_item;
  std::uint32_t unused;
};

struct ItemStatus {
  std::uint64_t size;
  std::uint64_t ok;
};

inline constexpr int kHeaderTag = 1;
inline constexpr int kBodyTag = 2;
// Between the workers of one spawn (their MPI_COMM_WORLD): a relayed broadcast's run entry.
inline constexpr int kRelayTag = 3;
inline constexpr std::size_t kEagerBytes = std::size_t{64} * 1024;
inline constexpr std::size_t kPieceBytes = std::size_t{1} << 30;
// A Batch takes entries up to this size (larger ones travel alone) and is sent once it holds
// kBatchBytes.
inline constexpr std::size_t kBatchedEntryBytes = std::size_t{16} * 1024;
inline constexpr std::size_t kBatchBytes = std::size_t{48} * 1024;

struct Message {
  MessageKind kind;
  Bytes body;
};

// Appends a trivially copyable value's bytes.
template <class T>
void append_raw(Bytes& out, const T& value) {
  std::size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

void append_string(Bytes& out, std::string_view text);

// Calls `each` with every entry of a list body (u64 size + bytes, repeated).
template <class Each>
void for_each_entry(std::span<const char> list, Each each) {
  while (!list.empty()) {
    std::uint64_t size;
    if (list.size() < sizeof size) throw ProtocolError("fiber: a protocol list was cut short");
    std::memcpy(&size, list.data(), sizeof size);
    if (list.size() - sizeof size < size)
      throw ProtocolError("fiber: a protocol list was cut short");
    each(list.subspan(sizeof size, size));
    list = list.subspan(sizeof size + size);
  }
}

// Collects small entries of a list body to send them as one message.
class Batch {
 public:
  explicit Batch(MessageKind kind) : kind_(kind) {}
  bool empty() const { return bytes_.empty(); }
  // Appends one entry made of `parts` back to back.
  void add(std::initializer_list<std::span<const char>> parts);
  bool full() const { return bytes_.size() >= kBatchBytes; }
  // The list body as it would be sent.
  std::span<const char> bytes() const { return bytes_; }
  void send(class Channel& channel);

 private:
  MessageKind kind_;
  Bytes bytes_;
};

// Reads values front to back out of a message body; throws fiber::Error on a short body.
class BodyReader {
 public:
  explicit BodyReader(std::span<const char> body) : body_(body) {}
  template <class T>
  T raw() {
    T value;
    std::memcpy(&value, take(sizeof(T)).data(), sizeof(T));
    return value;
  }
  std::string string();
  std::span<const char> take(std::size_t size);
  std::size_t position() const { return position_; }

 private:
  std::span<const char> body_;
  std::size_t position_ = 0;
};

// One peer over an intercommunicator: rank `peer` of its remote group (the master is rank 0 of a
// worker's; the workers of one spawn are ranks 0.. of the master's).
class Channel {
 public:
  explicit Channel(MPI_Comm comm, int peer = 0);
  // Sends still in flight (to a peer that was lost: others are waited for first) are let go:
  // their requests freed, their buffers kept to the end of the process, since MPI may still read
  // them.
  ~Channel();
  Channel(Channel&&) = default;

  MPI_Comm comm() const { return comm_; }
  std::int32_t peer() const { return peer_; }

  // Receiving, one message at a time. The caller owns the request (so that a master can test
  // the requests of all its workers in one MPI_Testsome): post_receive() posts into it, and when
  // it completes, on_received() returns the message, or nothing if more of a large body is due
  // (in which case it posted the next receive into the same request). On a failure (see
  // failure()) no receive is posted and the request is MPI_REQUEST_NULL.
  void post_receive(MPI_Request* request);
  std::optional<Message> on_received(const MPI_Status& status, MPI_Request* request);

  // Sends a message whose body is `parts` back to back. Everything is copied, except the last
  // part of a large body, which is sent in place: `keep_alive` must own the memory it points to.
  void send(MessageKind kind, std::initializer_list<std::span<const char>> parts,
            std::shared_ptr<const void> keep_alive = nullptr);
  void send(MessageKind kind) { send(kind, {}); }
  // Rings `doorbell` after every send from now on (none: stops): the peer sleeps in poll on it.
  void ring_after_sends(std::shared_ptr<const LaneDoorbellRing> doorbell) {
    doorbell_ = std::move(doorbell);
  }
  // Whether a large body is being received (its sender waits for this side's progress).
  bool receiving_body() const { return large_.has_value(); }
  // Completes what it can of the sends in flight; true if none is left.
  bool progress_sends();
  void wait_sends();

  // An MPI call on this channel failed (its peer died, or the connection broke) or the peer sent
  // something that is not a message: the channel says why and stops communicating (sends are
  // dropped, nothing is received). Its owner takes the peer for lost. Sends left in flight keep
  // their buffers for as long as the channel lives.
  const std::optional<std::string>& failure() const { return failure_; }
  void fail(std::string why);
  // How many channels of this process have failed so far: a look that needs no scan of them all.
  static std::uint64_t failures_so_far() { return failures_.load(std::memory_order_relaxed); }

 private:
  struct PendingSend {
    mpi::Request request;
    std::shared_ptr<const Bytes> buffer;
    std::shared_ptr<const void> keep_alive;
  };
  void start_send(const char* data, std::size_t size, int tag, std::shared_ptr<const Bytes> buffer,
                  std::shared_ptr<const void> keep_alive);

  MPI_Comm comm_;
  int peer_;
  std::vector<char> eager_;
  std::optional<MessageHeader> large_;  // header of a large body being received
  Bytes large_body_;
  std::size_t large_received_ = 0;
  std::deque<PendingSend> sends_;
  std::shared_ptr<const LaneDoorbellRing> doorbell_;
  std::optional<std::string> failure_;
  static inline std::atomic<std::uint64_t> failures_{0};
};

}  // namespace fiber::detail
