"""What ``--json`` prints: indented JSON written by the standard library's C encoder.

``json.dumps(..., indent=1)`` runs the pure-Python encoder (the C one serves only unindented
output): on a 1000-flow run's record it costs more than the simulation. Here a container that
holds only scalars (and empty containers) is one line from the C encoder, e.g. a flow's
figures or a list of completion times; the containers above them are indented one space per
level, as ``indent=1`` would. The text parses to the same values as ``json.dumps`` gives.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from typing import Any


def _default(o: Any) -> Any:
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


def _c_encoder() -> Callable[[Any], str]:
    """The C encoder with the separators of unindented ``json.dumps``, made once:
    ``JSONEncoder.encode`` makes one per call, which costs as much as a flow's encoding. The
    pure-Python one where the interpreter has no C encoder."""
    # Not in the typeshed stubs, and None where the interpreter lacks the C module.
    c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if c_make_encoder is None:  # pragma: no cover - CPython always has it
        return json.JSONEncoder(separators=(", ", ": ")).encode
    # markers None: no check for cycles (a record is a tree); allow_nan as json.dumps.
    enc = c_make_encoder(
        None, _default, encode_basestring_ascii, None, ": ", ", ", False, False, True
    )

    def encode(value: Any) -> str:
        if isinstance(value, str):
            return encode_basestring_ascii(value)
        return "".join(enc(value, 0))

    return encode


_ENCODE = _c_encoder()


#: What is laid out over lines (a subclass is written on one line: valid all the same).
_CONTAINERS = frozenset((dict, list, tuple))


def _nested(value: Any) -> bool:
    """Whether ``value`` is a container holding a non-empty container."""
    kind = type(value)
    if kind is dict:
        children: Any = value.values()
    elif kind is list or kind is tuple:
        children = value
    else:
        return False
    # The children's types in one pass of C (a flow's ten figures are not looked at one by
    # one), then only the containers among them.
    if _CONTAINERS.isdisjoint(set(map(type, children))):
        return False
    return any(c for c in children if type(c) in _CONTAINERS)


def _key(key: Any) -> str:
    """A dict's key as ``json.dumps`` writes it (a number, ``true`` or ``null`` as text)."""
    if isinstance(key, str):
        return _ENCODE(key)
    one = _ENCODE({key: 0})
    return one[1 : one.rindex(":")]


def _write(value: Any, depth: int, out: list[str]) -> None:
    if not _nested(value):
        out.append(_ENCODE(value))
        return
    pad = "\n" + " " * (depth + 1)
    if type(value) is dict:
        out.append("{")
        for i, (k, v) in enumerate(value.items()):
            out.append(f"{',' if i else ''}{pad}{_key(k)}: ")
            _write(v, depth + 1, out)
        out.append("\n" + " " * depth + "}")
    else:
        out.append("[")
        for i, v in enumerate(value):
            out.append(f"{',' if i else ''}{pad}")
            _write(v, depth + 1, out)
        out.append("\n" + " " * depth + "]")


def dumps(value: Any) -> str:
    """``value`` as indented JSON text (see the module's note)."""
    out: list[str] = []
    _write(value, 0, out)
    return "".join(out)


def print_json(value: Any) -> None:
    """Print ``value`` as indented JSON on standard output."""
    print(dumps(value))
