"""Collection rules for the whole suite (the doctests of the package are collected too): the
Gymnasium environments' modules are left out when the optional ``gymnasium`` (extra ``rl``) is
not installed; their tests in tests/gym skip with that reason."""

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("gymnasium") else ["bbopt/gym/*"]
