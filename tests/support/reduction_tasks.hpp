// Tasks for tests of Pool::map_reduce (registered in reduction_tasks.cpp), and the fold a
// reduction's plan makes (libfiber/src/reduction/reduction_plan.hpp), computed here by hand from
// its documented rule, so that a test can compare bits.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fiber_test {

// Doubles of very different magnitudes: their sum depends on the order of the additions.
double spread_value(int i);
double add_doubles(double a, double b);
// Item i, and the concatenation that keeps item order (associative, not commutative).
std::vector<int> single(int i);
std::vector<int> concatenate(std::vector<int> a, const std::vector<int>& b);
// spread_value(i), but the first call with i == kill_at SIGKILLs its worker (the task process's
// parent), once per `marker` file: a worker lost in the middle of a reduction.
double spread_value_or_kill_worker(int i, int kill_at, const std::string& marker);

// spread_value(i), but the first call with i == drop_at removes the partial results stored on
// this node so far (/dev/shm/fiber-partial.*, not those still being written), once per `marker`
// file: a node's store that lost what its chunks left there.
double spread_value_or_drop_partials(int i, int drop_at, const std::string& marker);

// sum of spread_value(i), i < items, in blocks of `block_sizes` items (one per host, in order),
// each cut into chunks of `chunk_sizes[b]` items: items folded left in a chunk, chunks in a
// block, blocks in order.
double tree_sum(const std::vector<std::size_t>& block_sizes,
                const std::vector<std::size_t>& chunk_sizes);
double linear_sum(int items);

}  // namespace fiber_test
