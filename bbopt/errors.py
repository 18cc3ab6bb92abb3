"""Exception classes of bbopt.

Every error a user can cause by bad input is a :class:`BboptError`; its message names what to
fix (the file, line or JSON path, and the field). The CLI prints such errors on one line, without
a traceback, and exits non-zero. An :class:`InvalidDecision` is different: it is raised by the
simulation engine when a policy returns a decision that breaks the platform's limits, and means a
bug in the policy, not in the input. :func:`check_acyclic` is the check every reader of parsed
documents shares (file readers and in-memory topology descriptions alike), :func:`check_keys` the
check of their keys, :class:`UniqueKeys` the refusal of a JSON object that repeats one.
"""

from __future__ import annotations

from typing import Any


class BboptError(Exception):
    """Base class of every error bbopt raises on purpose."""


class InputError(BboptError, ValueError):
    """Bad input data: a workload, platform, state or option.

    ``source`` is a file name (or ``"<json>"``), ``line`` a 1-based line number or a JSON path,
    ``field`` the offending field. All three are optional but make the message precise.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | str | None = None,
        field: str | None = None,
    ) -> None:
        self.reason = message  # the message without the location, for re-raising elsewhere
        self.source = source
        self.line = line
        self.field = field
        where = []
        if source is not None:
            where.append(str(source))
        if line is not None:
            where.append(f"line {line}" if isinstance(line, int) else str(line))
        if field is not None:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)

    def at(self, *, source: str | None = None, line: int | str | None = None,
           field: str | None = None) -> InputError:
        """The same error located further: what is given fills what is not already known."""
        return InputError(self.reason, source=self.source if self.source is not None else source,
                          line=self.line if self.line is not None else line,
                          field=self.field if self.field is not None else field)


class UnknownNameError(BboptError, KeyError):
    """A policy, backend or workload name that is not registered."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        self.kind = kind
        self.name = name
        self.known = sorted(known)
        super().__init__(f"unknown {kind} {name!r}; known: {', '.join(self.known)}")

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class InvalidDecision(BboptError, RuntimeError):
    """A policy's decision that the engine refuses: a bug of the policy, naming the job."""

    def __init__(self, message: str, *, job_id: str | None = None, time: float | None = None):
        self.job_id = job_id
        self.time = time
        where = f"t={time:g}s" if time is not None else ""
        if job_id is not None:
            where = f"{where}, job {job_id}" if where else f"job {job_id}"
        super().__init__(f"invalid decision ({where}): {message}" if where else message)


class OverbookedError(RuntimeError):
    """A reservation that would push some resource below zero (raised by the planner's
    profile; a policy's kept plan that a changed state no longer has room for)."""


def check_keys(data: Any, known: frozenset[str] | set[str], *, source: str | None = None,
               line: int | str | None = None) -> None:
    """Refuse a key of mapping ``data`` that is not in ``known``, naming it (a misspelt
    ``node_ssd`` must not silently give a platform without SSD), with the nearest known key."""
    unknown = sorted((k for k in data if k not in known), key=str)
    if not unknown:
        return
    import difflib

    near = difflib.get_close_matches(str(unknown[0]), sorted(known), n=1)
    hint = f"; did you mean {near[0]!r}?" if near else f"; known: {', '.join(sorted(known))}"
    raise InputError(f"unknown key{hint}", source=source, line=line, field=str(unknown[0]))


class UniqueKeys:
    """``object_pairs_hook`` for :func:`json.loads` that notes objects repeating a key (JSON
    allows it; Python keeps the last value silently); :meth:`check` then names the first such
    key and its JSON path. Usage: ``hook = UniqueKeys(); data = json.loads(text,
    object_pairs_hook=hook); hook.check(data, source)``.
    """

    def __init__(self) -> None:
        self.repeated: dict[int, str] = {}  # id of an object -> the key it repeats

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        d = dict(pairs)
        if len(d) != len(pairs):
            seen: set[str] = set()
            self.repeated[id(d)] = next(k for k, _ in pairs if k in seen or seen.add(k))
        return d

    def check(self, data: Any, source: str | None = None) -> None:
        if not self.repeated:
            return
        stack: list[tuple[Any, str]] = [(data, "$")]
        while stack:  # (depth first, in document order: the first repeated key is named)
            node, where = stack.pop()
            if isinstance(node, dict):
                if id(node) in self.repeated:
                    key = self.repeated[id(node)]
                    raise InputError(f"key {key!r} appears twice (JSON keeps only the last)",
                                     source=source, line=where, field=key)
                stack.extend((v, f"{where}.{k}") for k, v in reversed(node.items()))
            elif isinstance(node, list):
                stack.extend((v, f"{where}[{i}]") for i, v in reversed(list(enumerate(node))))


_YAML_LOADER: Any = None


def unique_key_yaml_loader() -> Any:
    """A ``yaml.SafeLoader`` that refuses a mapping repeating a key (PyYAML keeps the last
    silently), with the line of the repeat; keys merged in with ``<<`` may be overridden."""
    global _YAML_LOADER
    if _YAML_LOADER is None:
        import yaml

        class UniqueKeyLoader(yaml.SafeLoader):
            def construct_mapping(self, node, deep=False):
                if isinstance(node, yaml.MappingNode):
                    seen: set[Any] = set()
                    for key_node, _ in node.value:
                        if key_node.tag == "tag:yaml.org,2002:merge" \
                                or not isinstance(key_node, yaml.ScalarNode):
                            continue
                        key = self.construct_object(key_node)
                        if key in seen:
                            raise yaml.constructor.ConstructorError(
                                None, None, f"key {key!r} appears twice (YAML keeps only the "
                                "last)", key_node.start_mark)
                        seen.add(key)
                return super().construct_mapping(node, deep=deep)

        _YAML_LOADER = UniqueKeyLoader
    return _YAML_LOADER


#: Nesting deeper than this in a document is refused (no description of a machine needs it).
MAX_DEPTH = 200


def check_acyclic(data: Any, source: str) -> None:
    """Refuse a document that contains itself (a YAML alias cycle) or nests too deeply.

    Shared subtrees (the same alias used twice) are fine; only a container that is its own
    ancestor is an error. The walk is iterative, so it cannot overflow the stack either.
    """
    on_path: set[int] = set()
    done: set[int] = set()
    stack: list[tuple[Any, str, bool]] = [(data, "$", True)]
    depth = 0
    while stack:
        node, where, enter = stack.pop()
        if not enter:
            on_path.discard(id(node))
            done.add(id(node))
            depth -= 1
            continue
        if not isinstance(node, dict | list) or id(node) in done:
            continue  # a shared subtree is checked once (no exponential walk of aliases)
        if id(node) in on_path:
            raise InputError("contains itself (a YAML alias cycle)", source=source, line=where)
        depth += 1
        if depth > MAX_DEPTH:
            raise InputError(f"nested deeper than {MAX_DEPTH} levels", source=source, line=where)
        on_path.add(id(node))
        stack.append((node, where, False))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in items:
            if isinstance(v, dict | list):
                stack.append((v, f"{where}.{k}" if isinstance(node, dict) else f"{where}[{k}]",
                              True))
