"""The emulation's namespaces by name: finding them and removing them, also for a run that
died without removing its own (the guard, the next run, ``incast emulate --cleanup``).

Everything a run makes is named ``il<pid>-…`` (namespaces) or ``il<pid>[ab]<i>`` (veths while
in the root namespace), so a testbed belongs to the process ``pid`` and a testbed whose
process is gone is a leftover. Only the standard library is used here, so that the guard
(:mod:`incastlab.real.guard`) starts without the extension's tables.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess

NS_RE = re.compile(r"^il(\d+)-")
#: Where `ip netns` keeps its named namespaces.
NETNS_DIR = "/var/run/netns"
LINK_RE = re.compile(r"^il(\d+)[ab]\d+$")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def netns_list() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def kill_ns_processes(names: list[str]) -> None:
    """SIGKILL every process living in one of namespaces ``names`` (the client, captures,
    probes): one pass over /proc, matching each process's namespace to theirs."""
    inodes = set()
    for name in names:
        with contextlib.suppress(OSError):
            inodes.add(f"net:[{os.stat(f'{NETNS_DIR}/{name}').st_ino}]")
    if not inodes:
        return
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry.name}/ns/net") in inodes:
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            continue


def _ip_batch(commands: list[str]) -> None:
    """Run ``ip`` commands in one process, going on past those that fail (already gone)."""
    if commands:
        subprocess.run(
            ["ip", "-force", "-batch", "-"],
            input="\n".join(commands) + "\n",
            capture_output=True,
            text=True,
        )


def remove_testbed(pid: int) -> None:
    """Remove every namespace and root-namespace link of run `pid`, killing what runs there."""
    mine = [name for name in netns_list() if (m := NS_RE.match(name)) and int(m[1]) == pid]
    kill_ns_processes(mine)
    _ip_batch([f"netns del {name}" for name in mine])
    # Veths still in the root namespace (a run killed while building) go too.
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    links = []
    for line in out.splitlines():
        ifname = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        m = LINK_RE.match(ifname)
        if m and int(m[1]) == pid:
            links.append(f"link del {ifname}")
    _ip_batch(links)


def remove_leftovers() -> list[int]:
    """Remove testbeds of earlier runs whose process is gone; the pids cleaned."""
    dead = set()
    for name in netns_list():
        m = NS_RE.match(name)
        if m and not pid_alive(int(m[1])):
            dead.add(int(m[1]))
    for pid in dead:
        remove_testbed(pid)
    return sorted(dead)


def ours() -> list[str]:
    """Namespaces any incastlab emulation has now (for tests and `--cleanup`)."""
    return [n for n in netns_list() if NS_RE.match(n)]
