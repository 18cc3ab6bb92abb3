"""The ``bbopt`` command and ``python -m bbopt``: :func:`bbopt.cli.main`, then an exit that
spares the interpreter its last garbage collection over the run's objects.

At exit CPython collects every generation once more before it frees the modules; after a
replay that walk visits every job, record and decision object (about 17 ms after KTH-SP2, 3 % of
a ``bbopt simulate`` process). :func:`gc.freeze` moves them to the permanent generation, which
that collection skips; they are freed as before. :func:`bbopt.cli.main` itself does not freeze:
a caller that runs it in its own process (tests, notebooks) keeps collecting as usual.
"""

from __future__ import annotations

import gc
import sys

from bbopt.cli import main


def run() -> None:
    """Run the command line and exit with its status."""
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    run()
