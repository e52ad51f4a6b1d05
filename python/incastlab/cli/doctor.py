"""`incast doctor`: a capture in, the scenario it shows, a replica beside it and ranked
remedies out."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incastlab.cli.common import (
    UsageError,
    add_capture_args,
    add_workers_flag,
    out_dir,
    out_file,
    table,
    whole,
)

if TYPE_CHECKING:
    from rich.console import Console

    from incastlab.doctor import Diagnosis

DOCTOR_EXAMPLES = """\
examples:
  incast sim --senders 16 --sru 256KB --blocks 20 --pcap run.pcap && incast doctor run.pcap
  incast doctor capture.pcap --receiver 10.0.0.17 --out diagnosis/
  incast doctor capture.pcapng --profile classic --seeds 5 --json | jq .estimates
  incast doctor run.pcap --rto-min-candidates 1ms,10ms,200ms --seeds 1 --no-remedies
  incast doctor run.pcap --html report.html          # one page to forward
  incast monitor --iface eth0 --duration 60s --record eth0.parquet && incast doctor eth0.parquet
  incast doctor capture.pcap --monitor eth0.parquet  # both of one event

FILE is a capture (pcap, pcapng) or a recording of `incast monitor --record` (Parquet). A
recording alone shows no flows: the doctor reads the link, the idle waits that follow
line-rate bursts (they bound RTOmin), the host's drops and retransmissions, and says whether
it looks like incast; with a capture of the same event (--monitor) its bound narrows the fit.

What the capture shows directly (senders, response sizes, rounds, link rate, RTT) is read
from it. The switch buffer and RTOmin, which a capture at the receiver cannot show, are fitted
by simulation: for each candidate RTOmin the buffer at which the replica, captured and read
as the capture is, times out as often per block; then the RTOmin whose replica completes its
blocks in the capture's times. Where several RTOmins fit alike (with the linux profile every
RTOmin below the RTT-driven timeout does) RTOmin is reported as a bound, not a value.
"""


def add_doctor_parser(sub: Any) -> None:
    from incastlab.doctor import DEFAULT_PROFILE, DEFAULT_SEEDS

    s = sub.add_parser(
        "doctor",
        help="from a capture to the scenario it shows, a replica and ranked remedies",
        description="Read a capture taken at the receiver (pcap or pcapng), infer the "
        "incast scenario it shows (each value with its range, confidence and evidence), fit "
        "the switch buffer by simulation, run the replica under several seeds beside the "
        "capture, and when the evidence shows incast rank incast mitigate's remedies on it.",
        epilog=DOCTOR_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_capture_args(s)
    s.add_argument(
        "--monitor",
        metavar="RECORDING",
        help="a recording of incast monitor (--record) of the same event: bounds RTOmin",
    )
    s.add_argument(
        "--profile",
        choices=["linux", "classic"],
        help=f"whose TCP the senders run in the replica (default {DEFAULT_PROFILE})",
    )
    s.add_argument(
        "--cc",
        choices=["reno", "cubic", "dctcp", "bbr"],
        help="the senders' congestion control, when known (a capture at the receiver does "
        "not show it; default: the profile's, cubic for linux)",
    )
    s.add_argument(
        "--seeds",
        type=whole(1, 100),
        metavar="K",
        help=f"seeds the replica runs under (default {len(DEFAULT_SEEDS)})",
    )
    s.add_argument(
        "--rto-min-candidates",
        type=_times,
        metavar="LIST",
        help="RTOmins the fit tries, comma-separated (default: 1ms..1s, the common values)",
    )
    s.add_argument(
        "--no-remedies", action="store_true", help="diagnose and replicate only, rank nothing"
    )
    add_workers_flag(s)
    s.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    s.add_argument(
        "--out",
        type=out_dir,
        metavar="DIR",
        help="write the replica (replica.toml) and the diagnosis (diagnosis.json) to DIR",
    )
    s.add_argument(
        "--html",
        type=out_file(".html"),
        metavar="FILE.html",
        help="write the diagnosis as one self-contained page a person can forward",
    )
    s.set_defaults(handler=cmd_doctor)


#: The flags that act on a capture's replica, as (attribute, flag): a recording alone has
#: no replica, so each is refused there rather than silently ignored.
CAPTURE_ONLY = (
    ("monitor", "--monitor"),
    ("html", "--html"),
    ("out", "--out"),
    ("profile", "--profile"),
    ("cc", "--cc"),
    ("seeds", "--seeds"),
    ("rto_min_candidates", "--rto-min-candidates"),
    ("no_remedies", "--no-remedies"),
    ("workers", "--workers"),
    ("receiver", "--receiver"),
)


def _times(text: str) -> list[int]:
    from incastlab.units import parse_time

    try:
        return [parse_time(x.strip()) for x in text.split(",") if x.strip()]
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"--rto-min-candidates: {e}") from None


def cmd_doctor(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab._core import TraceError
    from incastlab.cli.common import tracking
    from incastlab.doctor import EvidenceError, diagnose
    from incastlab.files import InputFileError, regular_file

    try:
        regular_file(a.capture, "capture")
        if a.monitor:
            regular_file(a.monitor, "--monitor")
    except InputFileError as e:
        raise UsageError(str(e)) from None
    if _is_parquet(a.capture):
        return _doctor_recording(a, out)
    # What the user left out takes the doctor's own defaults.
    named: dict[str, Any] = {
        "seeds": range(1, a.seeds + 1) if a.seeds else None,
        "rto_candidates": a.rto_min_candidates,
        "profile": a.profile,
    }
    with tracking(err, "doctoring", None, not a.json) as tracker:
        try:
            d = diagnose(
                a.capture,
                receiver=a.receiver,
                remedies=not a.no_remedies,
                workers=a.workers,
                tracker=tracker,
                recording=a.monitor,
                cc=a.cc,
                **{k: v for k, v in named.items() if v},
            )
        except (EvidenceError, TraceError) as e:
            raise UsageError(str(e)) from None
    if a.json:
        print(json.dumps(d.to_json()))
    else:
        print_diagnosis(out, err, d)
    written = write_diagnosis(d, a.out) if a.out else []
    if a.html:
        import tomli_w

        from incastlab.plot.doctor_report import write_doctor_html

        written.append(write_doctor_html(d, a.html, tomli_w.dumps(d.scenario)))
    for p in written:
        if not a.json:
            err.print(f"wrote {p}")
    return 0


def _is_parquet(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"PAR1"


def _doctor_recording(a: argparse.Namespace, out: Console) -> int:
    """A recording alone: what it shows, and the verdict; no replica (no flows to copy)."""
    from incastlab.doctor import EvidenceError
    from incastlab.doctor.infer import shown
    from incastlab.doctor.recording import diagnose_recording

    for attr, flag in CAPTURE_ONLY:
        if getattr(a, attr):
            raise UsageError(
                f"{flag}: FILE is a recording, which has no flows to replicate; {flag} needs a "
                "capture (incast doctor CAPTURE --monitor RECORDING)"
            )
    try:
        rec = diagnose_recording(a.capture)
    except EvidenceError as e:
        raise UsageError(str(e)) from None
    if a.json:
        print(json.dumps(rec.to_json()))
        return 0
    out.print(f"[bold]incast doctor[/bold] · {rec.path} · recording of {rec.run.iface}")
    _print_estimates(out, "what the recording shows", rec.estimates)
    f = rec.figures
    out.print(
        f"average {shown('link', f['avg_bps'])}, peak {shown('link', f['peak_bps'])} over "
        f"{f['duration_s']:,.1f} s; {f['idle_gaps']} idle gaps, {f['recurring_waits']} "
        f"timeout-like; this host: {f.get('timeouts', 0)} timeouts, "
        f"{f.get('retrans_segs', 0)} retransmitted segments, {f.get('loss_probes', 0)} loss "
        f"probes, {f['nic_drops'] + f['qdisc_drops']} drops (NIC and qdisc)"
    )
    out.print(("[bold red]incast[/bold red]: " if rec.incast else "") + rec.why)
    for note in rec.notes:
        out.print(f"[dim]note: {note}[/dim]")
    return 0


def write_diagnosis(d: Diagnosis, directory: str) -> list[Path]:
    """``replica.toml`` (the scenario to edit and rerun) and ``diagnosis.json``."""
    import tomli_w

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    replica = out / "replica.toml"
    replica.write_text(tomli_w.dumps(d.scenario))
    diagnosis = out / "diagnosis.json"
    diagnosis.write_text(json.dumps(d.to_json(), indent=1))
    return [replica, diagnosis]


def print_diagnosis(out: Console, err: Console, d: Diagnosis) -> None:
    """The inferred scenario, capture beside replica, the verdict and the remedies."""
    out.print(f"[bold]incast doctor[/bold] · {d.path} · receiver {d.trace.report['receiver']}")
    _print_estimates(out, "what the capture shows", d.estimates)
    _print_side(out, d)
    if d.recording is not None:
        out.print(f"recording {d.recording.path}: {d.recording.why}")
    for note in d.notes:
        out.print(f"[dim]note: {note}[/dim]")
    out.print(("[bold red]incast[/bold red]: " if d.incast else "") + d.why)
    if d.remedies is not None:
        from incastlab.cli.render_runs import print_ranking

        print_ranking(out, err, d.remedies)
    elif d.incast:
        out.print("remedies not ranked (--no-remedies)")


def _print_estimates(out: Console, title: str, estimates: dict[str, Any]) -> None:
    from incastlab.doctor.infer import shown

    est = table(title)
    for c in ["value", "estimate", "range", "confidence", "from"]:
        est.add_column(c, justify="left" if c in ("value", "from") else "right")
    for name, e in estimates.items():
        lo, hi = shown(name, e.lo), shown(name, e.hi)
        rng = "" if e.lo == e.hi else f"{lo}..{hi if e.hi is not None else '∞'}"
        if e.lo == 0 and e.hi:
            rng = f"≤ {hi}"
        text = shown(name, e.value)
        if e.confidence == "bound":  # the value is not identified: show the bound
            if not e.lo:
                text, rng = f"≤ {hi}", ""
            else:
                text, rng = (f"≥ {lo}", "") if e.hi is None else (f"{lo}..{hi}", "")
        est.add_row(name, text, rng, e.confidence, e.evidence)
    out.print(est)


def _print_side(out: Console, d: Diagnosis) -> None:
    from incastlab.units import format_rate

    side = table("capture beside the replica")
    unit = "block" if d.estimates["workload"].value == "sync_read" else "flow"
    heads = ["", "goodput", f"{unit} p50", f"{unit} p99", "timeouts/block", "stalls/block"]
    for c in [*heads, "blocks"]:
        side.add_column(c, justify="right")
    for label, f in (("capture", d.capture), (f"replica ({len(d.seeds)} seeds)", d.replica)):
        seeds = f.seed_goodputs_bps
        spread = (
            f" ({format_rate(min(seeds))}..{format_rate(max(seeds))})" if len(seeds) > 1 else ""
        )
        side.add_row(
            label,
            format_rate(f.goodput_bps) + spread,
            f"{f.quantile(0.5) * 1e3:,.2f} ms",
            f"{f.quantile(0.99) * 1e3:,.2f} ms",
            f"{f.timeouts_per_block:.2f}",
            f"{f.stalls_per_block:.2f}",
            str(f.blocks),
        )
    out.print(side)
