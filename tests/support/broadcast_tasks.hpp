// Tasks for tests of Pool::broadcast (registered in broadcast_tasks.cpp): parameters large enough
// to be relayed per node (dispatch/broadcast_routes.hpp: from 64 KiB), and a check of what each
// worker's task process holds.
#pragma once

#include <chrono>
#include <cstddef>
#include <utility>
#include <vector>

#include <fiber/fiber.hpp>

namespace fiber_test {

inline constexpr std::size_t kParameterCount = 100'000;

// Generation g's parameters: g, g + 1, ...
std::vector<double> parameters_of(int generation);
// Broadcast: keeps the generation and its parameters' checksum in the task process.
void set_parameters(int generation, const std::vector<double>& values);
// The worker's pid and the generation its task process holds (-1 if its parameters did not
// arrive whole), after a short sleep, so that every worker of a pool takes some of a map's items.
std::pair<long, int> held_generation(int ignored);

// Maps held_generation over the pool (60 items) and returns the generation each item saw.
std::vector<int> held_by_the_pool(fiber::Pool& pool);
// The same, and checks that every worker of the pool ran some item (gtest expectations), mapping
// again (for 10 s at most) while one has not, and that those later maps see the same.
std::vector<int> held_by_every_worker(fiber::Pool& pool);
// Waits (at most 30 s) until the pool has taken `count` workers for lost.
void wait_for_losses(fiber::Pool& pool, std::uint64_t count);
// Waits (at most 30 s) until the pool holds `count` workers: a worker lost on another node than
// the master's is replaced only once a worker there has answered (a node in doubt).
void wait_for_workers(fiber::Pool& pool, int count);

}  // namespace fiber_test
