"""Reading the files users name (scenarios, sweep specs, CDFs, server lists, a sweep's
``sweep.json``): regular files only, bounded in size, UTF-8, and TOML or JSON nested no deeper
than a scenario can be.

Every rule about what such a file may be lives here, so a FIFO, ``/dev/zero``, a UTF-16 file
or a 5,000-deep array is refused in one line naming the file, wherever it is named, instead of
hanging, filling memory or ending in a traceback.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from incastlab.units import shown

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: Largest input file read: a scenario, spec or CDF is a few kilobytes; a list of 10,000
#: sender counts about 60 KB.
MAX_BYTES = 4 << 20
#: Deepest nesting of tables and lists in an input (a scenario nests three levels).
MAX_DEPTH = 16


class InputFileError(ValueError):
    """A file that cannot be read as the text input it should be (the message names it)."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def regular_file(path: str | Path, what: str) -> int:
    """The size of ``path``, a ``what`` (e.g. ``"capture"``) read by code that opens it
    itself: a regular file that exists, can be read and is not empty. Otherwise
    :class:`InputFileError` saying what it is: no such file, a directory, a device or a
    named pipe (not a regular file), empty. Nothing is opened, so a pipe cannot hang this."""
    name = shown(str(path))
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputFileError(f"{what} {name}: no such file") from None
    except NotADirectoryError:
        raise InputFileError(f"{what} {name}: no such file (a parent is not a directory)") from None
    except OSError as e:
        raise InputFileError(f"cannot read {what} {name}: {e.strerror}") from None
    except ValueError:  # a NUL in the path
        raise InputFileError(f"cannot read {what} {name}: not a file name") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputFileError(f"{what} {name} is a directory; give a file")
    if not stat.S_ISREG(st.st_mode):
        raise InputFileError(f"{what} {name} is {_kind(st.st_mode)}, not a regular file")
    if not os.access(path, os.R_OK):
        raise InputFileError(f"cannot read {what} {name}: permission denied")
    if st.st_size == 0:
        raise InputFileError(f"{what} {name} is empty (0 bytes)")
    return st.st_size


def read_text(path: str | Path, what: str, limit: int = MAX_BYTES) -> str:
    """The UTF-8 text of ``path`` (a ``what``, e.g. ``"scenario file"``), at most ``limit``
    bytes; :class:`InputFileError` otherwise."""
    name = shown(str(path))
    try:
        # Non-blocking, so that a named pipe swapped in after any check cannot hang the open.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise InputFileError(f"cannot read {what} {name}: {e.strerror}") from None
    except ValueError:  # a NUL in the path
        raise InputFileError(f"cannot read {what} {name}: not a file name") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise InputFileError(f"{what} {name} is {_kind(mode)}, not a file")
    with os.fdopen(fd, "rb") as fh:
        try:
            data = fh.read(limit + 1)
        except OSError as e:
            raise InputFileError(f"cannot read {what} {name}: {e.strerror}") from None
    if len(data) > limit:
        raise InputFileError(f"{what} {name} is larger than {limit:,} bytes")
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputFileError(f"{what} {name} is UTF-16 text; save it as UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputFileError(
            f"{what} {name} is not UTF-8 text (byte {data[e.start]:#04x} at offset {e.start}); "
            "save it as UTF-8"
        ) from None


def check_depth(value: Any, what: str, limit: int = MAX_DEPTH) -> None:
    """Raise :class:`InputFileError` if tables and lists in ``value`` nest deeper than
    ``limit`` (iteratively: a deep value cannot exhaust the stack here)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if depth > limit:
            raise InputFileError(f"{what}: tables and lists nested more than {limit} deep")
        if isinstance(v, dict):
            stack.extend((x, depth + 1) for x in v.values())
        elif isinstance(v, list | tuple):
            stack.extend((x, depth + 1) for x in v)


def loads_toml(text: str, what: str) -> dict[str, Any]:
    """TOML text as a dict, nested at most :data:`MAX_DEPTH` deep."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputFileError(f"{what}: not valid TOML: {e}") from None
    except RecursionError:
        raise InputFileError(
            f"{what}: tables and lists nested more than {MAX_DEPTH} deep"
        ) from None
    except ValueError as e:  # an integer beyond Python's digit limit, say
        raise InputFileError(f"{what}: a value cannot be read: {shown(str(e), 120)}") from None
    check_depth(data, what)
    out: dict[str, Any] = data
    return out


def read_toml(path: str | Path, what: str) -> dict[str, Any]:
    """A TOML file as a dict: :func:`read_text` then :func:`loads_toml`."""
    return loads_toml(read_text(path, what), f"{what} {shown(Path(path).name)}")


def read_json(path: str | Path, what: str) -> Any:
    """A JSON file (written by incastlab, perhaps damaged since)."""
    text = read_text(path, what)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise InputFileError(f"{what} {shown(str(path))} is not valid JSON: {e}") from None
    check_depth(data, what)
    return data
