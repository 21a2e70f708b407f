"""CPython's Pool tests (_TestPool, _TestPoolWorkerErrors, _TestPoolWorkerLifetime) on fiber.

The classes are made from test._test_multiprocessing by cpython_cases.py; what cannot apply on a
cluster is skipped there with its reason (docs/python-cpython-cases.md).
"""

import os

from cpython_cases import install_cases, markdown_table

# Where the skipped cases are listed for readers.
DOCS_TABLE = os.path.join(
    os.path.dirname(__file__), os.pardir, os.pardir, os.pardir, "docs", "python-cpython-cases.md"
)

install_cases(globals())


def test_the_docs_table_is_the_table_the_cases_are_skipped_by():
    with open(DOCS_TABLE, encoding="utf-8") as docs:
        assert markdown_table() in docs.read()
