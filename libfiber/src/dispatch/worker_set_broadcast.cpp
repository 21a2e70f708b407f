// WorkerSet's broadcasts (worker_set.hpp): into lanes, directly, or once per node group through
// relays (broadcast_routes.hpp), whose siblings wait with stand-ins that the master fills itself
// if a relay on their way is lost.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "dispatch/broadcast_routes.hpp"
#include "dispatch/worker_set.hpp"
#include "log.hpp"
#include "wire/messages.hpp"

namespace fiber::detail {

void WorkerSet::send_broadcast(const std::shared_ptr<PoolHandle>& pool,
                               const std::vector<std::shared_ptr<ScheduledJob>>& jobs,
                               Clock::time_point now) {
  std::vector<RouteCandidate> candidates;
  std::vector<int> laned;  // written into their lanes by the master, never relayed
  for (int id : pool->workers) {
    const Worker& worker = *workers_[id];
    if (lane_fits(worker, *pool)) {
      laned.push_back(id);
    } else {
      candidates.push_back({id, worker.group.get(), worker.info.host});
    }
  }
  std::unordered_map<int, std::size_t> position;  // worker id -> its index in pool->workers
  for (std::size_t i = 0; i < pool->workers.size(); ++i) position[pool->workers[i]] = i;
  auto job_of = [&](int id) { return jobs[position.at(id)]; };
  std::size_t body_bytes = jobs.empty() ? 0 : jobs.front()->state().arguments(0, 1).size();
  auto routes = route_broadcast(candidates, body_bytes);
  std::size_t relays = 0, siblings = 0;
  for (const auto& route : routes.relayed) {
    for (const RelayRoute* relay : route_relays(route)) {
      ++relays;
      siblings += relay->siblings.size();
    }
  }
  log::debug(
      "broadcast of '{}' ({} bytes): {} into lanes, {} direct, {} relay(s) for {} sibling(s), {} "
      "sent the body by the master",
      jobs.empty() ? std::string() : jobs.front()->state().task(), body_bytes, laned.size(),
      routes.direct.size(), relays, siblings, routes.relayed.size());
  for (int id : laned) send_chunk(id, pool, job_of(id), 0, 1, kRunBroadcast, nullptr, now);
  for (int id : routes.direct) send_chunk(id, pool, job_of(id), 0, 1, kRunBroadcast, nullptr, now);
  for (const auto& route : routes.relayed) {
    Worker& relay = *workers_[route.relay];
    std::uint64_t relay_chunk = next_chunk_id_++;
    auto hops = route_hops(route);
    std::vector<RelayHop> relay_hops;
    for (const auto& hop : hops) {
      relay_hops.push_back({workers_[hop.worker]->channel.peer(), hop.descendants});
    }
    Bytes prefix = Relay::encode_route(relay_hops);
    send_entry(relay, MessageKind::relay, prefix, *pool, *job_of(route.relay), 0, 1, kRunBroadcast,
               relay_chunk, nullptr);
    add_in_flight(relay, {relay_chunk, job_of(route.relay), pool, 0, 1}, now);
    // Every worker the route reaches waits with a stand-in for the first relay's copy...
    std::unordered_map<int, std::uint64_t> stand_in_of;
    for (int member : route_members(route)) {
      Worker& worker = *workers_[member];
      std::uint64_t chunk_id = next_chunk_id_++;
      send_stand_in(worker, *pool, *job_of(member), chunk_id, relay_chunk);
      add_in_flight(worker, {chunk_id, job_of(member), pool, 0, 1}, now);
      stand_in_of[member] = chunk_id;
    }
    // ... which the master sends it itself if any relay on its way is lost.
    for (const RelayRoute* on_the_way : route_relays(route)) {
      auto& relayed = relayed_by_[on_the_way->relay];
      // Stand-ins answered since the last broadcast need no fallback any more.
      std::erase_if(relayed, [&](const RelayedChunk& chunk) { return !holds(chunk); });
      for (int member : route_members(*on_the_way)) {
        relayed.push_back({member, stand_in_of.at(member)});
      }
    }
  }
}

void WorkerSet::send_stand_in(Worker& worker, const PoolHandle& pool, const ScheduledJob& job,
                              std::uint64_t chunk_id, std::uint64_t relay_chunk) {
  RunHeader header = run_header(pool, job.state(), chunk_id, 0, 1, kRunBroadcast | kRunFromRelay);
  Bytes stand_in = stand_in_entry(header, relay_chunk);
  worker.channel.send(MessageKind::run, {entry_size_prefix(stand_in.size()), stand_in});
  sending_.push(worker.info.id);
}

bool WorkerSet::holds(const RelayedChunk& chunk) const {
  const Worker& worker = *workers_[chunk.sibling];
  return !worker.dead &&
         std::any_of(worker.in_flight.begin(), worker.in_flight.end(),
                     [&](const InFlight& c) { return c.chunk_id == chunk.chunk_id; });
}

void WorkerSet::fall_back_from_relay(int relay) {
  auto relayed = relayed_by_.find(relay);
  if (relayed == relayed_by_.end()) return;
  int resent = 0;
  for (const RelayedChunk& chunk : relayed->second) {
    if (!holds(chunk)) continue;
    Worker& worker = *workers_[chunk.sibling];
    const InFlight& in_flight =
        *std::find_if(worker.in_flight.begin(), worker.in_flight.end(),
                      [&](const InFlight& c) { return c.chunk_id == chunk.chunk_id; });
    send_entry(worker, MessageKind::run, {}, *in_flight.pool, *in_flight.job, in_flight.first,
               in_flight.count, kRunBroadcast | kRunRelayFallback, chunk.chunk_id, nullptr);
    ++resent;
  }
  relayed_by_.erase(relayed);
  if (resent > 0) {
    log::info("a broadcast relay was lost: {} of the workers it relays to get it from the master",
              resent);
  }
}

}  // namespace fiber::detail
