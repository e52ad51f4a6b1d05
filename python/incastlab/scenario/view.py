"""The normalized scenario as read-only attributes (``sc.topology.buffer.bytes``)."""

from __future__ import annotations

import copy
import json
from typing import Any


def _view(value: Any) -> Any:
    if isinstance(value, dict):
        return Section(value)
    if isinstance(value, list):
        # Pairs (a CDF's points) read as tuples, as the core's (bytes, probability) are.
        return [tuple(v) if isinstance(v, list) else v for v in value]
    return value


class Section:
    """A read-only view of one table of the normalized scenario."""

    __slots__ = ("_d",)
    _d: dict[str, Any]

    def __init__(self, data: dict[str, Any]) -> None:
        object.__setattr__(self, "_d", data)

    def __getattr__(self, name: str) -> Any:
        try:
            return _view(self._d[name])
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a scenario is read-only; build a new one with apply_overrides")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Section) and self._d == other._d

    def __hash__(self) -> int:
        return hash(json.dumps(self._d, sort_keys=True))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._d!r})"

    def model_dump(self) -> dict[str, Any]:
        """The table as a plain dict (a copy)."""
        return copy.deepcopy(self._d)


class Scenario(Section):
    """One incast experiment, normalized by the simulator core (see :func:`from_dict`).

    ``given`` is what it was made from, in base units (the normalized form if not told).
    """

    __slots__ = ("_given",)
    _given: dict[str, Any]

    def __init__(self, data: dict[str, Any], given: dict[str, Any] | None = None) -> None:
        super().__init__(data)
        object.__setattr__(self, "_given", data if given is None else given)

    def model_dump(self) -> dict[str, Any]:
        """The scenario as given, in base units: defaults derived from other keys (tcp.ecn,
        topology.receiver_link) are left out unless given, so overrides applied to it and
        normalized again derive them anew (DCTCP turns ECN on)."""
        return copy.deepcopy(self._given)

    def normalized(self) -> dict[str, Any]:
        """Every value in base units, every default filled in (a copy)."""
        return copy.deepcopy(self._d)

    def to_json(self) -> str:
        """The normalized scenario as canonical JSON (what sweeps key points by)."""
        return json.dumps(self._d, sort_keys=True, separators=(",", ":"))

    @property
    def senders(self) -> int:
        n: int = self._d["topology"]["senders"]
        return n
