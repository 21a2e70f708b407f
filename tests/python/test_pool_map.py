"""map, map_async and starmap over functions that travel by value."""

import math
import threading

import pytest

import fiber


def test_map_over_a_lambda(pool):
    assert pool.map(lambda x: x * x, range(10)) == [x * x for x in range(10)]


def test_map_over_a_closure(pool):
    offset = 100

    def shifted(x):
        return x + offset

    assert pool.map(shifted, [1, 2, 3]) == [101, 102, 103]


def test_map_keeps_item_order_with_a_chunksize(pool):
    assert pool.map(str, range(50), chunksize=7) == [str(x) for x in range(50)]


def test_map_of_nothing_is_empty(pool):
    assert pool.map(abs, []) == []


def test_starmap_unpacks_each_item(pool):
    assert pool.starmap(divmod, [(7, 2), (9, 4)]) == [(3, 1), (2, 1)]


def test_map_async_calls_back_on_another_thread_before_get_returns(pool):
    seen = []
    result = pool.map_async(
        lambda x: -x,
        [1, 2],
        callback=lambda values: seen.append((values, threading.current_thread())),
    )
    assert result.get(timeout=60) == [-1, -2]
    assert seen[0][0] == [-1, -2]
    assert seen[0][1] is not threading.current_thread()


def test_map_async_error_callback_gets_the_first_failure(pool):
    errors = []
    result = pool.map_async(int, ["1", "x", "y"], error_callback=errors.append)
    result.wait()
    assert result.ready() and not result.successful()
    assert isinstance(errors[0], ValueError) and "'x'" in str(errors[0])


def test_results_that_are_not_plain_data_come_back(pool):
    assert pool.map(lambda n: {n: [n] * n}, [2]) == [{2: [2, 2]}]
    assert isinstance(pool.apply(lambda: fiber.TimeoutError("t")), fiber.TimeoutError)


class _CallsCounted:
    """A fiber.Pool's C++ pool, with its map_async calls counted (how many steps a map took) and
    the bytes of the calls they sent."""

    def __init__(self, pool):
        self._pool = pool
        self.map_async_calls = 0
        self.call_bytes = 0

    def map_async(self, calls, *args, **kwargs):
        self.map_async_calls += 1
        self.call_bytes += sum(len(frame) for call in calls for frame in call)
        return self._pool.map_async(calls, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._pool, name)


def _counting(pool):
    counted = _CallsCounted(pool._pool)
    pool._pool = counted
    return counted


def _large_map_items():
    """Enough items for map to go in several steps (fiber/pool.py, _STEP_MIN_ITEMS)."""
    return list(range(5 * fiber.pool._STEP_MIN_ITEMS + 3))


def test_a_large_map_goes_in_steps_and_keeps_its_order():
    items = _large_map_items()
    with fiber.Pool(2) as pool:
        counted = _counting(pool)
        assert pool.map(lambda x: x * 3, items) == [x * 3 for x in items]
        assert counted.map_async_calls > 1
        steps = counted.map_async_calls
        assert pool.map(str, items, chunksize=1) == [str(x) for x in items]
        assert counted.map_async_calls - steps > 1
        pairs = [(x, 7) for x in items]
        assert pool.starmap(divmod, pairs) == [divmod(x, 7) for x in items]


def test_a_small_map_is_one_call():
    with fiber.Pool(2) as pool:
        counted = _counting(pool)
        assert pool.map(abs, range(-100, 0)) == list(range(100, 0, -1))
        assert counted.map_async_calls == 1


def test_a_map_takes_any_iterable_and_a_range_goes_as_ranges():
    items = _large_map_items()
    with fiber.Pool(2) as pool:
        assert pool.map(abs, tuple(items)) == items
        assert pool.map(abs, (x for x in items)) == items
        assert pool.map_async(abs, {3: "a", 1: "b"}.keys()).get(timeout=60) == [3, 1]
        counted = _counting(pool)
        assert pool.map(abs, range(len(items))) == items
        # Each batch a slice of the range, a range itself: a few bytes, not a pickled int per item.
        assert counted.call_bytes < len(items)


def _fails_at(x, bad):
    if x == bad:
        raise KeyError(f"item {x}")
    return x


def test_a_large_map_raises_a_late_steps_failure_and_the_pool_goes_on():
    items = _large_map_items()
    with fiber.Pool(2) as pool:
        counted = _counting(pool)
        with pytest.raises(KeyError, match=f"item {items[-2]}"):
            pool.starmap(_fails_at, [(x, items[-2]) for x in items])
        assert counted.map_async_calls > 1
        assert pool.map(abs, [-1, -2]) == [1, 2]


def test_steps_are_one_below_twice_the_smallest_step_and_a_few_per_worker_above():
    step_size, least = fiber.pool._step_size, fiber.pool._STEP_MIN_ITEMS
    assert step_size(2 * least - 1, 80, 5) == 80  # one step: all the batches
    assert step_size(0, 0, 5) == 1
    per_worker = fiber.pool._STEPS_PER_WORKER
    assert step_size(2_000_000, 80, 5) == 80 // (per_worker * 5)
    # No step of fewer than the smallest step's items (chunksize 1: a batch per item).
    items = 30_000
    step = step_size(items, items, 5)
    assert step >= least and math.ceil(items / step) == items // least
