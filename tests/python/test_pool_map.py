"""map, map_async and starmap over functions that travel by value."""

import threading

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
