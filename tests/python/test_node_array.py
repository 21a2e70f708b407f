"""fiber.NodeArray: made in the master, read in tasks as a read-only numpy array over the node's
one shared copy, pickled as its name."""

import pickle

import cloudpickle
import numpy as np
import pytest

import fiber

# Large enough that a pickled copy would be obvious (8 MB), small enough to make in a moment.
ELEMENTS = 1_000_000
# What a pickled NodeArray may take at most: its name, shape, dtype, fill function.
PICKLED_BYTES_LIMIT = 2_000
SHM_PREFIX = "/dev/shm/fiber."


def mapped_file(address):
    """The file this process maps at `address` (from /proc/self/maps), or None."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            start, end = (int(bound, 16) for bound in fields[0].split("-"))
            if start <= address < end:
                return fields[5] if len(fields) > 5 else None
    return None


def square_rows(table):
    table[...] = np.arange(table.size, dtype=table.dtype).reshape(table.shape) ** 2


def test_a_task_reads_the_values_the_master_made(pool):
    values = np.random.default_rng(3).standard_normal(ELEMENTS)
    table = fiber.NodeArray(values)
    assert np.array_equal(table.array, values)
    indexes = [0, 1, ELEMENTS // 2, ELEMENTS - 1]
    assert pool.map(lambda i: table[i], indexes) == [values[i] for i in indexes]
    assert pool.apply(lambda t: float(t.array.sum()), (table,)) == float(values.sum())


def test_the_array_is_read_only_everywhere(pool):
    table = fiber.NodeArray(np.zeros(16, dtype=np.int32))
    assert table.array.flags.writeable is False
    with pytest.raises(ValueError, match="read-only"):
        table.array[0] = 1

    def write(t):
        try:
            t.array[0] = 1
        except ValueError as refused:
            return t.array.flags.writeable, str(refused)
        return t.array.flags.writeable, "written"

    writeable, outcome = pool.apply(write, (table,))
    assert writeable is False and "read-only" in outcome


def test_a_task_maps_the_nodes_copy_without_copying_it(pool):
    table = fiber.NodeArray(np.ones(ELEMENTS, dtype=np.float32))
    files = pool.map(lambda _: mapped_file(table.array.ctypes.data), range(4))
    assert all(name and name.startswith(SHM_PREFIX) for name in files)
    assert mapped_file(table.array.ctypes.data) in files


def test_pickling_sends_the_name_not_the_data():
    table = fiber.NodeArray(np.ones(ELEMENTS))
    assert len(pickle.dumps(table)) < PICKLED_BYTES_LIMIT
    assert len(cloudpickle.dumps(lambda i: table[i])) < PICKLED_BYTES_LIMIT
    assert pickle.loads(pickle.dumps(table)) is table  # the process's one mapping


def test_a_fill_function_makes_it_from_shape_and_dtype(pool):
    table = fiber.NodeArray(shape=(100, 3), dtype=np.int64, fill=square_rows)
    assert table.shape == (100, 3) and table.dtype == np.int64 and len(table) == 100
    expected = (np.arange(300).reshape(100, 3) ** 2).tolist()
    assert pool.apply(lambda t: t.array.tolist(), (table,)) == expected
    assert np.asarray(table).sum() == sum(map(sum, expected))


def test_a_named_array_is_one_per_program():
    fiber.NodeArray(np.ones(4), name="test-unique")
    with pytest.raises(ValueError, match="exists already"):
        fiber.NodeArray(np.ones(4), name="test-unique")


@pytest.mark.parametrize(
    "arguments, error",
    [
        ({}, TypeError),
        ({"array": np.ones(2), "fill": square_rows}, TypeError),
        ({"array": np.ones(2), "dtype": np.int8}, TypeError),
        ({"shape": (2,), "fill": square_rows}, TypeError),
        ({"array": np.array([object()])}, TypeError),
        ({"array": np.ones(0)}, ValueError),
        ({"shape": (-1,), "dtype": np.int8, "fill": square_rows}, ValueError),
        ({"array": np.ones(2), "name": "a/b"}, fiber.FiberError),
    ],
)
def test_bad_input_is_one_clear_error(arguments, error):
    with pytest.raises(error):
        fiber.NodeArray(**arguments)


def test_what_the_fill_function_raises_is_raised_at_the_call():
    def refuse(_):
        raise KeyError("no values")

    with pytest.raises(KeyError, match="no values"):
        fiber.NodeArray(shape=4, dtype=np.int8, fill=refuse)
