"""Stack profiles: one key selects whose TCP the hosts run (the incast papers' kernels or
today's Linux), and the flags and library reach it."""

from __future__ import annotations

import json

import pytest

import incastlab
from incastlab.cli import main
from incastlab.scenario import from_dict

SMALL_FAN_IN = {
    "topology": {"senders": 2, "link": "100Mbps", "buffer": "32KB", "rtt": "50us"},
    "tcp": {"congestion_control": "cubic"},
    "workload": {"sru": "64KB", "blocks": 30},
}


def with_profile(profile: str) -> dict:
    d = json.loads(json.dumps(SMALL_FAN_IN))
    d["tcp"]["profile"] = profile
    return d


def test_the_linux_profile_bundles_todays_defaults_and_given_keys_win() -> None:
    s = from_dict({"tcp": {"profile": "linux", "delayed_ack": "off"}}).normalized()["tcp"]
    assert s["profile"] == "linux"
    assert s["rack_tlp"] and s["quickack"] and s["hystart"] and s["tso"]
    assert s["congestion_control"] == "cubic"
    assert s["timer_granularity"] == 4_000_000_000  # a 4 ms jiffy, in picoseconds
    assert s["delayed_ack"] == 0, "a key the scenario sets wins over the profile"
    # Today's Linux sender: tcp_cubic's arithmetic, growth after loss recovery has seen the
    # ACK, per-window cwnd-limited state, F-RTO on recurring timeouts.
    assert (s["cubic_update"], s["ack_order"], s["cwnd_limited"]) == (
        "linux",
        "recovery_first",
        "window",
    )
    assert s["frto_recurring"]
    assert (
        from_dict({}).normalized()["tcp"]
        == from_dict({"tcp": {"profile": "linux"}}).normalized()["tcp"]
    ), "a scenario that names no profile gets today's Linux"
    classic = from_dict({"tcp": {"profile": "classic"}}).normalized()["tcp"]
    assert classic["profile"] == "classic" and not classic["rack_tlp"]
    assert (classic["cubic_update"], classic["ack_order"], classic["cwnd_limited"]) == (
        "per_ack",
        "grow_first",
        "last_send",
    )
    assert not classic["frto_recurring"]


def test_the_linux_profile_gives_the_same_bytes_for_the_same_seed() -> None:
    fan_in = with_profile("linux")
    fan_in["topology"]["senders"] = 16
    a, b = (incastlab.simulate(fan_in) for _ in range(2))
    assert a.timeouts > 0, "losses and timeouts exercise every new rule"
    assert json.dumps(a.report, sort_keys=True) == json.dumps(b.report, sort_keys=True)


def test_an_unknown_profile_names_the_field() -> None:
    with pytest.raises(incastlab.ScenarioError) as e:
        from_dict({"tcp": {"profile": "windows"}})
    assert e.value.field == "tcp.profile"


def test_rack_tlp_repairs_a_small_fan_in_that_the_papers_kernels_time_out() -> None:
    classic = incastlab.simulate(with_profile("classic"))
    linux = incastlab.simulate(with_profile("linux"))
    assert classic.timeouts >= 10
    assert linux.timeouts <= classic.timeouts // 4
    assert linux.report["loss_probes"] > 0

    def stalled(r: incastlab.Result) -> int:
        """Blocks that sat out a 200 ms timer: the papers' RTO, or Linux's probe of a lone
        lost segment (2·SRTT + RTOmin, as tcp_schedule_loss_probe waits for one segment)."""
        return sum(t >= 200_000_000_000 for t in r.report["block_times"])

    # Measured: classic 11 RTOs, 10 of 30 blocks stalled, 13.1 Mbps; linux no RTO, 5 probes,
    # 4 stalled (a lone lost segment's probe waits RTOmin), 25.9 Mbps.
    assert stalled(classic) >= 10
    assert stalled(linux) <= stalled(classic) // 2
    assert linux.goodput_bps > 1.6 * classic.goodput_bps


def test_profile_and_cc_flags(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["sim", "--senders", "2", "--link", "100Mbps", "--buffer", "32KB", "--sru", "64KB"]
    main([*args, "--blocks", "5", "--profile", "linux", "--cc", "bbr", "--json"])
    rec = json.loads(capsys.readouterr().out)[0]
    sc = json.loads(rec["scenario"]) if isinstance(rec["scenario"], str) else rec["scenario"]
    assert sc["tcp"]["profile"] == "linux"
    assert sc["tcp"]["congestion_control"] == "bbr"
    assert sc["tcp"]["rack_tlp"] is True
