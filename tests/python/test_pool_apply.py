"""apply and apply_async: results, callbacks, timeouts."""

import collections
import multiprocessing
import os
import threading
import time
import types

import pytest

import fiber


def test_apply_passes_args_and_kwargs(pool):
    assert pool.apply(int, ("ff",), {"base": 16}) == 255


def test_apply_takes_arguments_and_keywords_in_every_form_multiprocessing_does(pool):
    # Plain arguments take a shorter way than others (fiber/_calls.py, encode_apply): both
    # give the same calls, and keywords may come in any mapping, empty or not.
    assert pool.apply(max, [3, 4.5, True]) == 4.5
    assert pool.apply(sorted, ([3, 1, 2],), types.MappingProxyType({"reverse": True})) == [3, 2, 1]
    assert pool.apply(divmod, (7, 2), collections.OrderedDict()) == (3, 1)
    assert pool.apply(str.join, (",", ("a", "b")), {}) == "a,b"
    with pytest.raises(TypeError):  # as multiprocessing's dict(kwds), at the call
        pool.apply(divmod, (7, 2), None)
    assert pool.apply(divmod, (7, 2)) == (3, 1)  # the pool goes on


def test_apply_runs_in_another_process(pool):
    assert pool.apply(os.getpid) != os.getpid()


def test_apply_async_callback_runs_before_get_returns(pool):
    called = threading.Event()
    values = []
    result = pool.apply_async(pow, (2, 10), callback=lambda v: (values.append(v), called.set()))
    assert result.get(timeout=60) == 1024
    assert called.is_set() and values == [1024]
    assert result.successful()


def test_apply_async_error_callback_gets_the_exception(pool):
    errors = []
    result = pool.apply_async(int, ("nope",), error_callback=errors.append)
    result.wait(timeout=60)
    assert not result.successful()
    assert isinstance(errors[0], ValueError)


def test_get_with_a_timeout_raises_a_multiprocessing_timeout_error(pool):
    result = pool.apply_async(time.sleep, (1,))
    with pytest.raises(multiprocessing.TimeoutError):
        result.get(timeout=0.05)
    assert not result.ready()
    with pytest.raises(ValueError, match="not ready"):
        result.successful()
    assert result.get(timeout=60) is None


def test_timeout_error_is_multiprocessings():
    assert issubclass(fiber.TimeoutError, multiprocessing.TimeoutError)


def test_threads_may_share_a_pool(pool):
    results = {}

    def submit(offset):
        results[offset] = pool.map(lambda x: x + offset, range(20))

    threads = [threading.Thread(target=submit, args=(offset,)) for offset in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {offset: [x + offset for x in range(20)] for offset in range(4)}


def test_a_method_of_an_unhashable_object_travels_with_its_object(pool):
    # A builtin method is hashed by its object: fiber's kept bytes of functions must not need it.
    assert pool.apply([3, 1, 2].copy) == [3, 1, 2]


def test_a_function_registered_by_value_after_a_call_goes_by_value(tmp_path, monkeypatch):
    # fiber keeps the bytes of functions that go by reference (their module and name); a module
    # registered with cloudpickle.register_pickle_by_value afterwards must send its functions by
    # value (here: with the master's changed global), not the kept reference.
    import cloudpickle

    (tmp_path / "fiber_test_kept_module.py").write_text(
        "SOURCE = 'the file'\n\ndef source():\n    return SOURCE\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import fiber_test_kept_module as module

    with fiber.Pool(1) as pool:
        assert pool.apply(module.source) == "the file"
        module.SOURCE = "the master"
        cloudpickle.register_pickle_by_value(module)
        try:
            assert pool.apply(module.source) == "the master"
        finally:
            cloudpickle.unregister_pickle_by_value(module)


def _called(function):
    return function()


def _adder(n):
    return lambda x: x + n


def test_a_result_that_only_cloudpickle_can_pickle_comes_back(pool):
    # Values are pickled by pickle's C pickler when it can, else by cloudpickle (fiber/_calls.py,
    # _frames): a closure made in the task process is one that only cloudpickle can.
    assert pool.apply(_adder, (2,))(3) == 5
    assert [add(1) for add in pool.map(_adder, [1, 2], 1)] == [2, 3]


def test_an_argument_holding_a_function_registered_by_value_goes_by_value(tmp_path, monkeypatch):
    # pickle's C pickler would send the function by reference (its module and name), which the
    # task process would import from the file: a module registered with
    # cloudpickle.register_pickle_by_value sends it by value, with the master's changed global.
    import cloudpickle

    (tmp_path / "fiber_test_argument_module.py").write_text(
        "SOURCE = 'the file'\n\ndef source():\n    return SOURCE\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import fiber_test_argument_module as module

    with fiber.Pool(1) as pool:
        assert pool.apply(_called, (module.source,)) == "the file"
        module.SOURCE = "the master"
        cloudpickle.register_pickle_by_value(module)
        try:
            assert pool.apply(_called, (module.source,)) == "the master"
            assert pool.map(_called, [module.source], 1) == ["the master"]
        finally:
            cloudpickle.unregister_pickle_by_value(module)
