"""numpy arrays as arguments and results: pickle protocol 5's out-of-band buffers, unpickled over
the bytes fiber received (python/src/frames.hpp), so a large array is copied once each way
beyond what fiber's transport copies, and comes back as multiprocessing's would: equal, of its
dtype, shape and order, writeable."""

import tracemalloc

import numpy
import pytest

# Large enough that a copy of it stands out among the master's other allocations, small enough
# for a quick test (the benchmark sends 100 MB: benchmarks/python_pool/).
ARRAY_BYTES = 20_000_000
# What the master itself may allocate through Python for a round trip of the array: the pickles
# and the lists, not a copy of the array's data (a copy would be ARRAY_BYTES).
MASTER_ALLOCATION_LIMIT = ARRAY_BYTES // 10


def large_array():
    return numpy.arange(ARRAY_BYTES // 8, dtype=numpy.float64)


def root_of(array):
    """What owns an array's memory: the end of its chain of bases."""
    while isinstance(array, numpy.ndarray) and array.base is not None:
        array = array.base
    return array.obj if isinstance(array, memoryview) else array


def received_in_place(array):
    """Whether `array` lies in the bytes fiber received (its joined frames), not in a copy."""
    return type(root_of(array)).__name__ == "_JoinedFrames"


def test_a_large_array_round_trips_as_argument_and_result(pool):
    array = large_array()
    [back] = pool.map(lambda a: a * 2, [array], chunksize=1)
    assert back.dtype == array.dtype and back.shape == array.shape
    assert numpy.array_equal(back, array * 2)


def test_the_argument_arrives_in_the_received_bytes(pool):
    assert pool.apply(received_in_place, (large_array(),))


def test_the_result_lies_in_the_received_bytes_and_is_writeable(pool):
    back = pool.apply(large_array)
    assert received_in_place(back)
    assert back.flags.writeable and back.flags.aligned
    back[0] = -1.0
    assert back[0] == -1.0


def test_the_master_makes_no_copy_of_the_data(pool):
    array = large_array()
    pool.apply(len, (array,))  # the pool warmed up: its first call allocates once
    tracemalloc.start()
    try:
        back = pool.apply(lambda a: a, (array,))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert numpy.array_equal(back, array)
    assert peak < MASTER_ALLOCATION_LIMIT


@pytest.mark.parametrize(
    "array",
    [
        numpy.arange(24, dtype=numpy.int16).reshape(2, 3, 4),
        numpy.asfortranarray(numpy.arange(12.0).reshape(3, 4)),
        numpy.arange(40, dtype=numpy.complex128).reshape(5, 8)[:, ::3],  # not contiguous
        numpy.array([(1, 2.5), (3, 4.5)], dtype=[("n", numpy.int32), ("x", numpy.float64)]),
        numpy.array(["a", None, 3], dtype=object),
        numpy.zeros((0, 7), dtype=numpy.uint8),
    ],
    ids=["int16-3d", "fortran", "strided", "structured", "object", "empty"],
)
def test_arrays_of_every_kind_keep_dtype_shape_and_order(pool, array):
    back, flags = pool.apply(lambda a: (a, a.flags.f_contiguous and not a.flags.c_contiguous),
                             (array,))
    assert back.dtype == array.dtype and back.shape == array.shape
    assert numpy.array_equal(back, array) if array.dtype != object else list(back) == list(array)
    fortran_only = array.flags.f_contiguous and not array.flags.c_contiguous
    assert flags == fortran_only
    assert back.flags.f_contiguous == array.flags.f_contiguous or back.size == 0
    assert back.flags.writeable


def test_several_arrays_in_one_call_and_one_result(pool):
    first, second = numpy.ones(1000), numpy.arange(10, dtype=numpy.int8)
    result = pool.apply(lambda a, b, scale: {"a": a * scale, "b": b}, (first, second),
                        {"scale": 3})
    assert numpy.array_equal(result["a"], first * 3) and numpy.array_equal(result["b"], second)


def test_arrays_through_imap_and_callbacks(pool):
    arrays = [numpy.full(100, n) for n in range(5)]
    assert [a[0] for a in pool.imap(lambda a: a + 1, arrays)] == [1, 2, 3, 4, 5]
    seen = []
    pool.map_async(lambda a: a.sum(), arrays, callback=seen.append).get(timeout=60)
    assert seen == [[0, 100, 200, 300, 400]]
