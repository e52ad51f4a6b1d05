"""Emulation at hundreds of senders without root: the capacity rule (with made-up machines),
and the block servers that one process runs for every sender (here on loopback addresses;
tests/test_emulate.py runs them inside namespaces as root)."""

from __future__ import annotations

import dataclasses
import json
import resource
import socket
import time

import pytest

from conftest import ROOMY
from incastlab import _core
from incastlab.cli import main
from incastlab.real import bench, capacity, emulate
from incastlab.real.testbed import build as testbed_build
from incastlab.scenario import from_dict

SRU = 256_000


def refusal(senders: int, machine: capacity.Machine, sru: int = SRU) -> str:
    with pytest.raises(capacity.CapacityError) as e:
        capacity.check(senders, sru, machine)
    message = str(e.value)
    assert "\n" not in message and message.startswith(
        f"topology.senders = {senders}: the testbed needs"
    )
    return message


def most_in(message: str) -> int:
    return int(message.split("at most ")[1].split()[0])


def test_what_a_testbed_of_256_senders_needs() -> None:
    need = capacity.check(256, SRU, ROOMY)
    assert need.fds == 2 * 256 + capacity.BASE_FDS
    assert need.netns == 258 and need.bridge_ports == 257 and need.neigh_entries == 512
    per_sender = capacity.KERNEL_BYTES_PER_SENDER + 2 * SRU
    assert need.memory == capacity.BASE_BYTES + 256 * per_sender


def test_too_little_memory_is_refused_and_the_largest_count_that_fits_is_named() -> None:
    small = dataclasses.replace(ROOMY, mem_available=1_000_000_000)
    message = refusal(600, small)
    assert "of memory" in message and "1,000 MB available" in message
    most = most_in(message)
    assert most > 0
    capacity.check(most, SRU, small)  # the count it names fits
    refusal(most + 1, small)
    # A larger SRU fills more socket buffers: fewer senders fit.
    assert most_in(refusal(600, small, sru=4 * SRU)) < most


def test_too_few_file_descriptors_under_the_hard_limit_is_refused() -> None:
    low = dataclasses.replace(ROOMY, nofile_soft=256, nofile_hard=768)
    message = refusal(300, low)
    assert "hard limit of 768 (ulimit -Hn)" in message
    assert most_in(message) == 256
    capacity.check(256, SRU, low)  # a low soft limit alone is raised, not refused


def test_the_namespace_limit_counts_those_in_use() -> None:
    few = dataclasses.replace(ROOMY, netns_max=300, netns_in_use=40)
    message = refusal(259, few)
    assert "user.max_net_namespaces = 300 leaves 260 (with 40 in use)" in message
    assert most_in(message) == 258
    capacity.check(258, SRU, few)


def test_the_neighbour_table_shared_by_all_namespaces_is_a_limit() -> None:
    default = dataclasses.replace(ROOMY, neigh_gc_thresh3=1024, neigh_entries=2)
    capacity.check(511, SRU, default)
    message = refusal(512, default)
    assert "net.ipv4.neigh.default.gc_thresh3 = 1024" in message
    assert "sysctl -w net.ipv4.neigh.default.gc_thresh3=2048" in message
    assert most_in(message) == 511


def test_a_bridge_takes_at_most_1024_ports() -> None:
    capacity.check(1023, SRU, ROOMY)
    message = refusal(1024, ROOMY)
    assert "the 1024 a bridge takes" in message and most_in(message) == 1023


def test_the_cli_refuses_before_building_anything(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    built: list[object] = []
    monkeypatch.setattr(testbed_build, "build", lambda *a, **k: built.append(a))
    # Nothing is built, so this runs as an ordinary user too: the root check is not the subject.
    monkeypatch.setattr(emulate, "check_can_emulate", lambda: None)
    small = dataclasses.replace(ROOMY, mem_available=1_000_000_000)
    monkeypatch.setattr(capacity.Machine, "here", classmethod(lambda cls: small))
    # A series: the largest point is refused before the smallest is run.
    code = main(["emulate", "--senders", "1,300", "--link", "100Mbps", "--blocks", "5"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and built == []
    assert len(err.splitlines()) == 1, err
    assert err.startswith("incast: error: topology.senders = 300: the testbed needs about")


def test_check_capacity_takes_the_scenarios_largest_share() -> None:
    sc = from_dict({"topology": {"senders": 3}, "workload": {"block": "1MB"}})
    need = emulate.check_capacity(sc, ROOMY)
    per_sender = capacity.KERNEL_BYTES_PER_SENDER + 2 * max(_core.block_split(1_000_000, 3))
    assert need.memory == capacity.BASE_BYTES + 3 * per_sender


def test_the_soft_descriptor_limit_is_raised_up_to_the_hard_one() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
        capacity.raise_nofile(1000)
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == min(1000, hard)
        capacity.raise_nofile(10)  # never lowered
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == min(1000, hard)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_this_machine_is_read() -> None:
    m = capacity.Machine.here()
    assert m.mem_available > 0 and m.nofile_hard >= m.nofile_soft > 0
    assert m.netns_in_use >= 1 and m.neigh_gc_thresh3 > 0


def logged(servers: _core.BlockServers, text: str, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if any(text in line for line in servers.logs()):
            return True
        time.sleep(0.02)
    return False


def test_one_process_serves_many_addresses_with_the_block_protocol() -> None:
    listen: list[tuple[str | None, str]] = [(None, f"127.0.5.{i}:0") for i in range(1, 33)]
    servers = _core.BlockServers(listen, congestion="reno")
    try:
        addrs = servers.addresses()
        assert [a.rsplit(":", 1)[0] for a in addrs] == [f"127.0.5.{i}" for i in range(1, 33)]
        config = bench.config(addrs, sru=20_000, sizes=[], blocks=3, warmup=1)
        result = json.loads(_core.bench(json.dumps(config)))
        assert result["bytes"] == 3 * 32 * 20_000
        stats = servers.stats()
        assert stats["requests"] == 4 * 32 and stats["connections"] == 32
        assert stats["bytes"] == 4 * 32 * 20_000
        # A malformed request is refused with a logged reason; the others go on serving.
        with socket.create_connection(tuple_of(addrs[5])) as s:
            s.sendall(b"GET / HTTP/1.0\r\n\r\n" + bytes(6))
            status = s.recv(24)
        assert status[:4] == b"INCB" and status[5] == 1  # Malformed
        # The log has a writer thread of its own (it never blocks serving): wait for the line.
        assert logged(servers, "refused a request")
        again = json.loads(_core.bench(json.dumps(config)))
        assert again["bytes"] == 3 * 32 * 20_000
    finally:
        servers.stop()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(tuple_of(addrs[0]), timeout=2)


def test_an_address_in_use_and_a_bad_address_are_named() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(RuntimeError, match=f"cannot listen on 127.0.0.1:{port}"):
            _core.BlockServers([(None, f"127.0.0.1:{port}")])
    with pytest.raises(ValueError, match="expected host:port"):
        _core.BlockServers([(None, "nowhere")])
    with pytest.raises(RuntimeError, match="no namespace"):
        _core.BlockServers([("il0-no-such-namespace", "10.77.0.2:9000")])


def tuple_of(addr: str) -> tuple[str, int]:
    host, port = addr.rsplit(":", 1)
    return host, int(port)
