"""imap and imap_unordered: order, lazy input, next(timeout)."""

import itertools
import time

import pytest

import fiber


def slow_identity(x):
    time.sleep(0.05 * (x % 3))
    return x


def test_imap_gives_results_in_item_order(pool):
    assert list(pool.imap(slow_identity, range(12))) == list(range(12))


def test_imap_unordered_gives_every_result(pool):
    assert sorted(pool.imap_unordered(slow_identity, range(12), chunksize=2)) == list(range(12))


def test_imap_reads_an_endless_input_lazily(pool):
    stream = pool.imap(lambda x: x * 2, itertools.count())
    assert [next(stream) for _ in range(5)] == [0, 2, 4, 6, 8]


# More items than the C++ feeder reads ahead of the results taken (4096 per worker).
MANY_ITEMS = 100_000


def test_imap_input_is_read_as_results_are_taken(pool):
    read = []

    def numbers():
        for x in range(MANY_ITEMS):
            read.append(x)
            yield x

    stream = pool.imap(abs, numbers())
    assert next(stream) == 0
    assert len(read) < MANY_ITEMS


def test_an_input_error_comes_at_its_position(pool):
    def numbers():
        yield 1
        yield 2
        raise KeyError("the input broke")

    stream = pool.imap(abs, numbers())
    assert [next(stream), next(stream)] == [1, 2]
    with pytest.raises(KeyError, match="the input broke"):
        next(stream)


def test_next_with_a_timeout_raises_timeout_error_and_can_be_called_again(pool):
    stream = pool.imap(lambda x: time.sleep(x) or x, [1.0])
    with pytest.raises(fiber.TimeoutError):
        stream.next(timeout=0.05)
    assert stream.next(timeout=60) == 1.0


def test_imap_rejects_a_chunksize_below_one(pool):
    with pytest.raises(ValueError, match="Chunksize must be 1"):
        pool.imap(abs, [1], chunksize=0)
