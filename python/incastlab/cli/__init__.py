"""The ``incast`` command."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from incastlab import _core
from incastlab import scenario as sc_mod
from incastlab.backends.sim import simulate
from incastlab.cli.common import UsageError, require_emulation, seconds_arg, size_arg, table
from incastlab.real.emulate import EmulationError
from incastlab.result import Result
from incastlab.scenario import Scenario, ScenarioError
from incastlab.units import UnitError, format_rate, format_size, format_time, parse_int_ranges

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_POINTS = 10_000

SIM_EXAMPLES = """\
examples:
  incast sim --senders 1..48 --sru 256KB --buffer 64KB --rto-min 200ms --plot collapse.png
  incast sim --senders 1,2,4,8,16,32,47 --sru 256KB --rto-min 1ms --clock 1us
  incast sim --senders 1..47 --vary tcp.rto_min=200ms,1ms --plot fix.png
  incast sim --senders 1..16 --sru 16KB --initial-window 1 --cwnd-restart block --plot m.png --model
  incast sim examples/chen-fig4.toml --senders 1..20 --json
  incast sim --workload incast --flow-size 270000B --senders 10,100,1000 --link 10Gbps
  incast sim scenario.toml --set tcp.sack=false --set workload.jitter=20us --out runs.parquet
"""


MODEL_EXAMPLES = """\
examples:
  incast model --senders 1..20 --sru 16KB,32KB,64KB --buffer 64KB --initial-window 1 --plot fig4.png
  incast model --senders 1..48 --sru 64KB,256KB,1MB --rtt 1ms --plot fig2.png
  incast model examples/incast-collapse.toml --json
  incast model rto-random --rto-min 10ms --delta 4ms --senders 1..256
"""


def _progress(err: Console, verb: str, show: bool) -> Progress:
    """A transient progress bar on stderr, shown only to a person at a terminal."""
    return Progress(
        TextColumn(f"[bold]{verb}[/bold] {{task.description}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not (show and err.is_terminal),
        transient=True,
    )


def parse_senders(spec: str) -> list[int]:
    """``"1,2,4"``, ``"1..48"``, ``"4..64:4"`` or a mix: ``"1..8,16,32"``."""
    try:
        return parse_int_ranges(spec, "--senders", MAX_POINTS)
    except UnitError as e:
        raise UsageError(str(e)) from None


def _parse_set(item: str) -> tuple[str, Any]:
    if "=" not in item:
        raise UsageError(f"--set: expected key=value such as tcp.sack=false, got {item!r}")
    key, raw = item.split("=", 1)
    try:
        value: Any = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return key.strip(), value


def _overrides(a: argparse.Namespace) -> dict[str, Any]:
    o: dict[str, Any] = {}
    flag_map = {
        "link": "topology.link",
        "receiver_link": "topology.receiver_link",
        "rtt": "topology.rtt",
        "buffer": "topology.buffer",
        "host_jitter": "topology.host_jitter",
        "rto_min": "tcp.rto_min",
        "rto_max": "tcp.rto_max",
        "clock": "tcp.clock_granularity",
        "initial_window": "tcp.initial_window",
        "delayed_ack": "tcp.delayed_ack",
        "cwnd_restart": "tcp.cwnd_restart",
        "workload": "workload.kind",
        "blocks": "workload.blocks",
        "jitter": "workload.jitter",
        "flow_size": "workload.flow_size",
        "background": "background.flows",
        "seed": "seed",
        "max_events": "run.max_events",
        "max_time": "run.max_time",
    }
    for attr, key in flag_map.items():
        v = getattr(a, attr)
        if v is not None:
            o[key] = v
    if a.no_sack:
        o["tcp.sack"] = False
    if a.sru is not None:
        o["workload.sru"] = a.sru
        o["workload.block"] = None
    if a.block is not None:
        o["workload.block"] = a.block
        o["workload.sru"] = None
    if a.flow_size is not None and a.workload is None:
        o["workload.kind"] = "incast"
    for item in a.set or []:
        k, v = _parse_set(item)
        o[k] = v
    return o


def _parse_vary(spec: str | None) -> tuple[str, list[Any]] | None:
    """``tcp.rto_min=200ms,1ms`` -> ("tcp.rto_min", ["200ms", "1ms"])."""
    if spec is None:
        return None
    if "=" not in spec:
        raise UsageError(f"--vary: expected key=v1,v2 such as tcp.rto_min=200ms,1ms, got {spec!r}")
    key, raw = spec.split("=", 1)
    values = [_parse_set(f"{key}={v}")[1] for v in raw.split(",") if v.strip()]
    if len(values) < 2:
        raise UsageError("--vary: give at least two values, separated by commas")
    return key.strip(), values


def _points(a: argparse.Namespace) -> list[tuple[str, list[Scenario]]]:
    """One labelled series of scenarios per --vary value (a single unlabelled one without)."""
    raw: dict[str, Any] = sc_mod.read_toml(a.scenario) if a.scenario else {}
    data = sc_mod.apply_overrides(raw, _overrides(a))
    topo = data.get("topology", {})
    file_senders = topo.get("senders") if isinstance(topo, dict) else None
    if a.senders is not None:
        counts = parse_senders(a.senders)
    elif isinstance(file_senders, list):
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in file_senders):
            raise ScenarioError("topology.senders: a list must hold whole numbers")
        counts = sorted(set(file_senders))
    elif isinstance(file_senders, str):
        counts = parse_senders(file_senders)
    elif file_senders is None:
        counts = [1, 2, 4, 8, 16, 32]
    else:
        counts = [file_senders]
    vary = _parse_vary(a.vary)
    variants: list[tuple[str, dict[str, Any]]] = [("", data)]
    if vary is not None:
        key, values = vary
        name = key.rsplit(".", 1)[-1]
        variants = [(f"{name} {v}", sc_mod.apply_overrides(data, {key: v})) for v in values]
    series = []
    for label, d in variants:
        pts = [sc_mod.from_dict(sc_mod.apply_overrides(d, {"topology.senders": n})) for n in counts]
        series.append((label, pts))
    return series


def _table(results: Sequence[Result], walls: Sequence[float]) -> Table:
    kind = results[0].report["workload"]
    t = table()
    middle = {
        "incast": ["last FCT", "vs optimal"],
        "queries": ["queries", "FCT mean", "FCT p99"],
    }.get(kind, ["block p50", "block max", "RTO blocks"])
    background = any(r.scenario["background"]["flows"] for r in results)
    pfc = any(r.scenario["topology"]["pfc"] for r in results)
    extra = (["background"] if background else []) + (["pauses"] if pfc else [])
    for col in ["N", "goodput", "% link", *middle, *extra, "timeouts", "drops", "events", "wall"]:
        t.add_column(col, justify="right")
    for r, wall in zip(results, walls, strict=True):
        row = r.row()
        pct = 100 * r.goodput_fraction
        style = "red" if pct < 40 else ("yellow" if pct < 70 else "green")
        cells = [str(r.senders), format_rate(r.goodput_bps), f"[{style}]{pct:.1f}%[/{style}]"]
        if kind == "queries":
            cells += [
                f"{row['queries']:,}",
                format_time((row["query_fct_mean_s"] or 0) * 1e12),
                format_time((row["query_fct_p99_s"] or 0) * 1e12),
            ]
        elif kind == "incast":
            fct = row["fct_max_s"] or 0.0
            over = row["fct_overhead"]
            cells += [format_time(fct * 1e12), f"{100 * over:+.1f}%" if over is not None else "-"]
        else:
            cells += [
                format_time((row["block_time_median_s"] or 0) * 1e12),
                format_time((row["block_time_max_s"] or 0) * 1e12),
                "-"
                if row["blocks_with_timeouts"] is None
                else f"{row['blocks_with_timeouts']}/{row['blocks']}",
            ]
        if background:
            cells.append(format_rate(row["background_bps"]))
        if pfc:
            cells.append(f"{row['pfc_pauses']:,}")
        cells += [f"{r.timeouts:,}", f"{r.drops:,}", f"{r.events:,}", f"{wall:.2f}s"]
        t.add_row(*cells)
    return t


def _labelled_rows(
    series: Sequence[tuple[str, Sequence[Any]]], row: Callable[[Any], dict[str, Any]]
) -> list[dict[str, Any]]:
    """One JSON object per point, tagged with its series label when there are several."""
    rows = []
    for label, points in series:
        for p in points:
            r = row(p)
            if label:
                r["series"] = label
            rows.append(r)
    return rows


def _sru_list_as_vary(a: argparse.Namespace) -> None:
    """``--sru 16KB,32KB`` means one series per SRU."""
    if a.sru and "," in a.sru:
        if a.vary:
            raise UsageError("--sru with several values already varies the SRU; drop --vary")
        a.vary, a.sru = f"workload.sru={a.sru}", None


def _with_sampling(sc: Scenario) -> Scenario:
    """``sc`` sampling its time series every quarter RTT (at least 10 µs), if it does not yet."""
    if sc.run.sample_interval:
        return sc
    every = max(sc.topology.rtt // 4, 10_000_000)
    return sc_mod.from_dict(
        sc_mod.apply_overrides(sc.normalized(), {"run.sample_interval": every}), normalized=True
    )


def cmd_sim(a: argparse.Namespace, out: Console, err: Console) -> int:
    _sru_list_as_vary(a)
    series_in = _points(a)
    if a.timeseries:
        # The time series is drawn for the largest sender count of the first series.
        label, pts = series_in[0]
        series_in[0] = (label, [*pts[:-1], _with_sampling(pts[-1])])
    total = sum(len(pts) for _, pts in series_in)
    series: list[tuple[str, list[Result]]] = []
    walls: list[list[float]] = []
    with _progress(err, "simulating", not a.json and not a.quiet) as bar:
        task = bar.add_task("", total=total)
        for label, pts in series_in:
            results: list[Result] = []
            times: list[float] = []
            for sc in pts:
                what = f"{label} N={sc.senders}".strip()
                bar.update(task, description=what)

                def tick(events: int, secs: float, what: str = what) -> None:
                    bar.update(task, description=f"{what} · {events:,} events · t={secs:.3f}s")

                t0 = time.perf_counter()
                results.append(simulate(sc, progress=tick))
                times.append(time.perf_counter() - t0)
                bar.advance(task)
            series.append((label, results))
            walls.append(times)
    everything = [r for _, rs in series for r in rs]
    if a.json:
        print(json.dumps(_labelled_rows(series, lambda r: r.to_json()), indent=1))
    elif not a.quiet:
        from incastlab.plot import scenario_line

        for (_label, rs), times in zip(series, walls, strict=True):
            head = f"[bold]incast sim[/bold] · {scenario_line(rs[0])}"
            out.print(head)
            out.print(_table(rs, times))
    if a.out:
        from incastlab.result.store import write_parquet

        p = write_parquet(everything, a.out)
        if not a.json:
            err.print(f"wrote {p}")
    if a.plot:
        from incastlab.plot import goodput_vs_senders

        vary = _parse_vary(a.vary)
        varied = vary[0].rsplit(".", 1)[-1] if vary else ""
        overlay = None
        if a.model:
            from incastlab.backends.model import predict_scenario
            from incastlab.model import ModelError

            try:
                overlay = [
                    [(sc.senders, predict_scenario(sc).prediction.goodput_bps) for sc in pts]
                    for _, pts in series_in
                ]
            except ModelError as e:
                raise ScenarioError(str(e)) from None
        p = goodput_vs_senders(series, a.plot, varied=varied, model=overlay)
        if not a.json:
            err.print(f"wrote {p}")
    if a.timeseries:
        from incastlab.plot.sweep import time_series

        p = time_series(series[0][1][-1], a.timeseries)
        if not a.json:
            err.print(f"wrote {p}")
    return 0


def cmd_model(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab import model
    from incastlab.backends.model import predict_scenario

    _sru_list_as_vary(a)
    extra = size_arg("--extra-buffer", a.extra_buffer)
    if extra is None:
        extra = model.CHEN_EXTRA_BUFFER
    series = []
    try:
        for label, pts in _points(a):
            series.append(
                (
                    label,
                    [
                        predict_scenario(
                            sc,
                            extra_buffer=extra,
                            a=a.partial_rto,
                            a_doubles_at=a.partial_rto_doubles_at,
                        )
                        for sc in pts
                    ],
                )
            )
    except model.ModelError as e:
        raise ScenarioError(str(e)) from None
    if a.json:
        print(json.dumps(_labelled_rows(series, lambda p: p.row()), indent=1))
    elif not a.quiet:
        first = series[0][1][0]
        if first.ignored:
            err.print(
                "[yellow]the model does not account for:[/yellow] " + ", ".join(first.ignored)
            )
        for label, ps in series:
            p0 = ps[0]
            head = f"[bold]incast model[/bold] · SRU {format_size(p0.sru)}"
            if label and "sru" not in label:
                head += f" · {label}"
            onset = p0.onset
            head += f" · collapse predicted from N = {onset} (Eq. 3)"
            out.print(head)
            t = table()
            for col in ("N", "regime", "goodput", "% link", "block time", "RTOs/block"):
                t.add_column(col, justify="right")
            for p in ps:
                pr = p.prediction
                pct = 100 * pr.goodput_bps / p.link_bps
                style = "red" if pct < 40 else ("yellow" if pct < 70 else "green")
                t.add_row(
                    str(p.senders),
                    "ideal (Eq. 1)"
                    if pr.regime == "ideal"
                    else ("RTO (Eq. 2)" if pr.timeouts_per_block == 1 else "partial RTO (Eq. 4)"),
                    format_rate(pr.goodput_bps),
                    f"[{style}]{pct:.1f}%[/{style}]",
                    format_time(pr.block_time_s * 1e12),
                    f"{pr.timeouts_per_block:g}",
                )
            out.print(t)
    if a.plot:
        from incastlab.plot import model_curves

        written = model_curves(series, a.plot)
        if not a.json:
            err.print(f"wrote {written}")
    return 0


def cmd_rto_random(argv: Sequence[str], out: Console, err: Console) -> int:
    from incastlab import model

    a = build_rto_random_parser().parse_args(argv)
    rto_min = seconds_arg("--rto-min", a.rto_min)
    delta = seconds_arg("--delta", a.delta)
    ns = parse_senders(a.senders)
    try:
        ex = model.expected_max_rto(ns, rto_min, delta)
        var = model.var_max_rto(ns, rto_min, delta)
        late = model.rto_exceeds(rto_min + delta / 4, ns, rto_min, delta)
    except model.ModelError as e:
        raise UsageError(str(e)) from None
    rows = [
        {
            "senders": n,
            "expected_max_rto_s": float(e),
            "sd_max_rto_s": float(v) ** 0.5,
            "p_exceeds_rto_min_plus_quarter_delta": float(p),
        }
        for n, e, v, p in zip(ns, ex, var, late, strict=True)
    ]
    if a.json:
        print(json.dumps(rows, indent=1))
    else:
        lo = format_time((rto_min - delta / 2) * 1e12)
        hi = format_time((rto_min + delta / 2) * 1e12)
        out.print(f"[bold]incast model rto-random[/bold] · RTO ~ U({lo}, {hi}) · E[X] → {hi}")
        t = table()
        for col in ("N", "E[X] (Eq. 6)", "sd(X) (Eq. 7)", "P(X > RTOmin + Δ/4)"):
            t.add_column(col, justify="right")
        for r in rows:
            t.add_row(
                str(r["senders"]),
                format_time(r["expected_max_rto_s"] * 1e12),
                format_time(r["sd_max_rto_s"] * 1e12),
                f"{r['p_exceeds_rto_min_plus_quarter_delta']:.3f}",
            )
        out.print(t)
    if a.plot:
        from incastlab.plot import expected_max_rto

        p = expected_max_rto(ns, rto_min, delta, a.plot)
        if not a.json:
            err.print(f"wrote {p}")
    return 0


def cmd_calibrate(argv: Sequence[str], out: Console, err: Console) -> int:
    from incastlab.model.calibrate import FULL_GRID, QUICK_GRID, calibrate

    p = argparse.ArgumentParser(
        prog="incast model calibrate",
        description="Simulate a grid (N 1-64, SRU 16 KB-1 MB, buffer 4-256 KB, RTOmin "
        "200/10/1 ms), fit the model's extra buffer (Eq. 3) and partial-RTO factor a (Eq. 4), "
        "and report its goodput error against the simulator: overall, per grid axis, worst.",
        epilog="examples:\n  incast model calibrate\n  incast model calibrate --quick --json\n"
        '  incast model calibrate --set tcp.initial_window=1 --set tcp.cwnd_restart=\\"block\\"',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--quick", action="store_true", help="a 40-point grid instead of 336")
    p.add_argument("--blocks", type=int, default=5, help="blocks per simulation (default 5)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="base scenario key")
    p.add_argument("--json", action="store_true", help="print the fit and every point as JSON")
    a = p.parse_args(argv)
    if a.blocks < 1:
        raise UsageError("--blocks: must be at least 1")
    base = sc_mod.apply_overrides({}, dict(_parse_set(x) for x in a.set or []))
    sc_mod.from_dict(base)  # fail early on a bad key
    grid = QUICK_GRID if a.quick else FULL_GRID
    with _progress(err, "calibrating", not a.json) as bar:
        task = bar.add_task("", total=None)
        c = calibrate(
            grid,
            blocks=a.blocks,
            base=base,
            on_point=lambda i, n: bar.update(task, completed=i, total=n),
        )
    summary = c.summary()
    if a.json:
        pts = [
            {
                "senders": q.senders,
                "sru": q.sru,
                "buffer": q.buffer,
                "rto_min": q.rto_min,
                "sim_bps": q.sim.goodput_bps,
                "model_bps": q.model_bps,
                "regime": q.regime,
                "error": q.error,
                "sim_timeouts": q.sim.timeouts,
            }
            for q in c.points
        ]
        print(json.dumps({**summary, "points": pts}, indent=1))
        return 0
    out.print(
        f"[bold]incast model calibrate[/bold] · {summary['points']} points · fitted extra buffer "
        f"{format_size(c.extra_buffer)} (Eq. 3), a = {c.a:.2f} (Eq. 4)"
    )
    out.print(
        f"model vs simulator goodput: median error {100 * summary['median_error']:.0f}%, "
        f"90th percentile {100 * summary['p90_error']:.0f}%"
    )
    t = table()
    for col in ("axis", "value", "median error", "p90 error"):
        t.add_column(col, justify="right")
    for axis in ("rto_min", "buffer", "sru", "senders"):
        for v, e in c.breakdown(axis).items():
            t.add_row(axis, str(v), f"{100 * e['median']:.0f}%", f"{100 * e['p90']:.0f}%")
    out.print(t)
    w = Table(title="where the model breaks down (worst points)", header_style="bold")
    for col in ("N", "SRU", "buffer", "RTOmin", "regime", "sim", "model", "model/sim", "sim RTOs"):
        w.add_column(col, justify="right")
    for q in sorted(c.points, key=lambda q: -q.error)[:12]:
        w.add_row(
            str(q.senders),
            q.sru,
            q.buffer,
            q.rto_min,
            q.regime,
            format_rate(q.sim.goodput_bps),
            format_rate(q.model_bps),
            f"{q.model_bps / q.sim.goodput_bps:.3g}×",
            f"{q.sim.timeouts:,}",
        )
    out.print(w)
    return 0


def cmd_mitigate(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.studies.mitigate import Outcome, choose

    try:
        chosen = choose(a.only)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if a.vary:
        raise UsageError("--vary: incast mitigate varies the mitigation; drop --vary")
    _sru_list_as_vary(a)
    if a.vary:
        raise UsageError("--sru: give one SRU to incast mitigate")
    ((_, base_points),) = _points(a)
    outcomes: list[Outcome] = []
    skipped: list[tuple[str, str]] = []
    with _progress(err, "mitigating", not a.json and not a.quiet) as bar:
        task = bar.add_task("", total=len(chosen) * len(base_points))
        for m in chosen:
            try:
                # A mitigation that cannot apply to this scenario (PFC with a shared
                # buffer, say) is reported as skipped with the reason, not run.
                changed = [
                    sc_mod.from_dict(
                        sc_mod.apply_overrides(sc.model_dump(), m.overrides(sc.normalized())),
                        normalized=True,
                    )
                    for sc in base_points
                ]
            except ScenarioError as e:
                skipped.append((m.name, str(e)))
                bar.advance(task, len(base_points))
                continue
            results = []
            for sc in changed:
                bar.update(task, description=f"{m.name} N={sc.senders}")
                results.append(simulate(sc))
                bar.advance(task)
            outcomes.append(Outcome(m, results))
    ranked = sorted(outcomes, key=lambda o: -o.mean_goodput)
    if a.json:
        rows = [
            {
                "mitigation": o.mitigation.name,
                "what": o.mitigation.what,
                "mean_goodput_bps": o.mean_goodput,
                "block_time_p50_s": o.block_quantile(0.5),
                "block_time_p99_s": o.block_quantile(0.99),
                "timeouts_per_block": o.timeouts_per_block,
                "points": [r.row() | {"scenario": r.scenario} for r in o.results],
            }
            for o in ranked
        ]
        rows += [{"mitigation": name, "skipped": why} for name, why in skipped]
        print(json.dumps(rows, indent=1))
    elif not a.quiet:
        from incastlab.plot import scenario_line

        ns = [r.senders for r in ranked[0].results]
        baseline = next(o for o in outcomes if o.mitigation.name == "baseline")
        out.print(f"[bold]incast mitigate[/bold] · {scenario_line(baseline.results[0])}")
        t = table()
        t.add_column("#", justify="right")
        t.add_column("mitigation")
        for n in ns:
            t.add_column(f"N={n}", justify="right")
        if len(ns) > 1:
            t.add_column("mean", justify="right")
        for col in ("vs base", "block p50", "block p99", "RTOs/block"):
            t.add_column(col, justify="right")
        t.add_column("what", style="dim")
        base = baseline.mean_goodput
        for i, o in enumerate(ranked, 1):
            cells = [str(i), o.mitigation.name]
            cells += [format_rate(r.goodput_bps) for r in o.results]
            if len(ns) > 1:
                cells.append(format_rate(o.mean_goodput))
            gain = o.mean_goodput / base if base else float("nan")
            cells += [
                f"{gain:.2g}×",
                format_time(o.block_quantile(0.5) * 1e12),
                format_time(o.block_quantile(0.99) * 1e12),
                f"{o.timeouts_per_block:.2f}",
                o.mitigation.what,
            ]
            t.add_row(*cells)
        out.print(t)
        for name, why in skipped:
            err.print(f"[yellow]skipped {name}:[/yellow] {why}")
    if a.plot:
        from incastlab.plot import goodput_vs_senders

        written = goodput_vs_senders(
            [(o.mitigation.name, o.results) for o in ranked],
            a.plot,
            title="Incast mitigations",
        )
        if not a.json:
            err.print(f"wrote {written}")
    return 0


def _add_scenario_flags(s: argparse.ArgumentParser) -> None:
    """The scenario file and the flags that override it, shared by sim and model."""
    s.add_argument("scenario", nargs="?", help="scenario TOML file (optional)")
    s.add_argument("--senders", help="sender counts: 1,2,4 or 1..48 or 4..64:4")
    g = s.add_mutually_exclusive_group()
    g.add_argument(
        "--sru", help="bytes each server returns per block, e.g. 256KB (several: 16KB,64KB)"
    )
    g.add_argument("--block", help="block striped over the servers, e.g. 1MB")
    s.add_argument("--workload", choices=["sync_read", "incast", "queries"], help="workload kind")
    s.add_argument("--flow-size", help="bytes per flow for the incast workload, e.g. 270000B")
    s.add_argument("--blocks", type=int, help="number of blocks to read")
    s.add_argument("--buffer", help="switch buffer per port: 64KB, 64KiB, 42pkt")
    s.add_argument("--link", help="access link rate, e.g. 1Gbps")
    s.add_argument("--receiver-link", help="receiver link rate (default: --link)")
    s.add_argument("--rtt", help="base round-trip time, e.g. 100us")
    s.add_argument("--rto-min", help="minimum RTO, e.g. 200ms, 1ms")
    s.add_argument("--rto-max", help="maximum RTO, e.g. 120s")
    s.add_argument("--clock", help="timer/RTT clock granularity, e.g. 1us, 1ms, 4ms")
    s.add_argument("--initial-window", type=int, help="initial window, segments")
    s.add_argument("--delayed-ack", help="delayed-ACK timeout (e.g. 40ms) or off")
    s.add_argument(
        "--cwnd-restart", choices=["idle", "block", "never"], help="slow-start restart policy"
    )
    s.add_argument("--no-sack", action="store_true", help="NewReno instead of SACK recovery")
    s.add_argument("--jitter", help="server response jitter, uniform in [0, J], e.g. 20us")
    s.add_argument("--host-jitter", help="per-packet host delay jitter, e.g. 1us or 0us")
    s.add_argument("--background", type=int, help="number of long-lived background flows")
    s.add_argument("--seed", type=int, help="random seed")
    s.add_argument("--max-events", type=int, help="event budget per point")
    s.add_argument("--max-time", help="simulated-time budget per point, e.g. 60s")
    s.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="any scenario key, e.g. tcp.dupthresh=2"
    )
    s.add_argument(
        "--vary",
        metavar="KEY=V1,V2",
        help="one series per value, side by side, e.g. tcp.rto_min=200ms,1ms",
    )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="incast",
        description="incastlab: predict, simulate and measure TCP incast.",
    )
    p.add_argument("--version", action="version", version=f"incastlab {_core.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    s = sub.add_parser(
        "sim",
        help="packet-level simulation of a scenario over a range of sender counts",
        description="Simulate a scenario (file and/or flags; flags override the file) for each "
        "sender count and print one row per count.",
        epilog=SIM_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_scenario_flags(s)
    s.add_argument("--json", action="store_true", help="print a JSON array, one object per point")
    s.add_argument("--out", metavar="FILE.parquet", help="write the results as Parquet")
    s.add_argument("--plot", metavar="FILE.png", help="draw goodput versus senders")
    s.add_argument(
        "--model", action="store_true", help="draw the analytical model's curve over the plot"
    )
    s.add_argument(
        "--timeseries",
        metavar="FILE.png",
        help="draw the bottleneck queue and cwnds over time for the largest sender count",
    )
    s.add_argument("-q", "--quiet", action="store_true", help="no table, no progress")

    m = sub.add_parser(
        "model",
        help="the analytical model (Chen Eq. 1-4) for the same scenarios, in milliseconds",
        description="Predict goodput per sender count with the flow-rate model: Eq. 1 before "
        "the onset of collapse (Eq. 3: the port overflows with the largest slow-start round of "
        "every sender), Eq. 2/4 after it. Reads the same scenario file and flags as `incast sim` "
        "and names the fields it does not model. `incast model rto-random --help` for RTO "
        "randomization (Hafeez Eq. 4-7).",
        epilog=MODEL_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_scenario_flags(m)
    m.add_argument(
        "--extra-buffer",
        default=None,
        help="buffering beyond the switch port in Eq. 3 (default 8KB, Chen's testbed)",
    )
    m.add_argument(
        "--partial-rto", type=float, default=1.0, help="a in Eq. 4: share of the RTO the link idles"
    )
    m.add_argument(
        "--partial-rto-doubles-at",
        type=int,
        metavar="N",
        help="from N senders on, two partial RTOs per block (2a)",
    )
    m.add_argument("--json", action="store_true", help="print a JSON array, one object per point")
    m.add_argument("--plot", metavar="FILE.png", help="Chen Figure 2: Eq. 1 solid, Eq. 2 dotted")
    m.add_argument("-q", "--quiet", action="store_true", help="no table")

    g = sub.add_parser(
        "mitigate",
        help="run a scenario under each mitigation and rank them",
        description="Simulate the scenario as given and under each mitigation (smaller RTOmin, "
        "microsecond timers, RTO randomization: uniform, TDA, MAA, FSA; DCTCP; ECN; RED; PFC; "
        "a bigger or shared buffer; fan-out window, request staggering, response jitter; a "
        "smaller initial window) and print them ranked by goodput. Mitigations the scenario "
        "cannot take are listed as skipped, with the reason.",
        epilog="examples:\n  incast mitigate examples/incast-collapse.toml --senders 16,47\n"
        "  incast mitigate --senders 64 --block 1MB --buffer 32KB --rto-min 10ms "
        "--only rto-tda,rto-maa --plot m.png",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_scenario_flags(g)
    g.add_argument("--only", metavar="A,B", help="run only these mitigations (and the baseline)")
    g.add_argument("--json", action="store_true", help="print the ranking as JSON")
    g.add_argument("--plot", metavar="FILE.png", help="goodput versus senders per mitigation")
    g.add_argument("-q", "--quiet", action="store_true", help="no table")

    e = sub.add_parser(
        "emulate",
        help="run a scenario on real Linux TCP in network namespaces (root)",
        description="Build N sender namespaces and a receiver namespace on a bridge, shape "
        "the receiver's switch port to the link rate with a tc queue of the port buffer, set "
        "RTOmin per route and the congestion control per socket, run incast serve/bench "
        "inside, and report with the kernel's timeout and retransmission counters and the "
        "queue's drops. Everything made is removed afterwards, also on Ctrl-C or SIGTERM; "
        "leftovers of killed runs are removed at the next start (or with --cleanup).",
        epilog="examples:\n  sudo incast emulate --senders 1,4,16 --link 100Mbps --buffer 32KB "
        "--sru 64KB --blocks 10\n  sudo incast emulate --cleanup",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_scenario_flags(e)
    e.add_argument("--warmup", type=int, default=1, help="blocks read first, not measured")
    e.add_argument("--time-limit", type=float, default=300.0, help="seconds per point at most")
    e.add_argument("--json", action="store_true", help="print a JSON array, one object per point")
    e.add_argument("--out", metavar="FILE.parquet", help="write the results as Parquet")
    e.add_argument("--plot", metavar="FILE.png", help="draw goodput versus senders")
    e.add_argument("--cleanup", action="store_true", help="only remove dead runs' testbeds")
    e.add_argument("-q", "--quiet", action="store_true", help="no table, no progress")

    c = sub.add_parser(
        "compare",
        help="run one scenario on several backends (sim, emulate, model) side by side",
        epilog="example:\n  sudo incast compare --backends sim,emulate,model --senders 1..16 "
        "--link 100Mbps --buffer 32KB --sru 64KB --plot compare.png",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_scenario_flags(c)
    c.add_argument("--backends", default="sim,model", help="comma-separated: sim,emulate,model")
    c.add_argument("--warmup", type=int, default=1, help="emulation: blocks not measured")
    c.add_argument("--time-limit", type=float, default=300.0, help="emulation: seconds per point")
    c.add_argument("--json", action="store_true", help="print the comparison as JSON")
    c.add_argument("--plot", metavar="FILE.png", help="goodput versus senders per backend")

    from incastlab.cli import real as cli_real
    from incastlab.cli import sweep as cli_sweep

    cli_sweep.add_parsers(sub)
    cli_real.add_parsers(sub)
    return p


def _emulate_points(a: argparse.Namespace, err: Console) -> list[tuple[str, list[Scenario]]]:
    raw = sc_mod.read_toml(a.scenario) if a.scenario else {}
    if a.link is None and "link" not in (raw.get("topology") or {}):
        # The default rate inside this machine's envelope, rather than the scenario's 1 Gbps.
        a.link = "100Mbps"
    series = _points(a)
    fast = {sc.topology.link for _, pts in series for sc in pts}
    from incastlab.real.emulate import RATE_ENVELOPE_BPS

    if max(fast) > RATE_ENVELOPE_BPS:
        err.print(
            f"[yellow]warning:[/yellow] {format_rate(max(fast))} is outside this machine's "
            "emulation envelope (about 100 Mbps on 2 cores): the CPU, not the tc queue, "
            "would be the bottleneck. Try --link 100Mbps."
        )
    return series


def cmd_emulate(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.real import emulate

    if a.cleanup:
        cleaned = emulate.remove_leftovers()
        err.print(f"removed the testbeds of {len(cleaned)} dead run(s)")
        return 0
    require_emulation()
    series_in = _emulate_points(a, err)
    series: list[tuple[str, list[Result]]] = []
    walls: list[list[float]] = []
    with _progress(err, "emulating", not a.json and not a.quiet) as bar:
        task = bar.add_task("", total=sum(len(p) for _, p in series_in))
        for label, pts in series_in:
            rs, ws = [], []
            for sc in pts:
                bar.update(task, description=f"{label} N={sc.senders}".strip())
                t0 = time.perf_counter()
                rs.append(emulate.run(sc, warmup=a.warmup, time_limit_s=a.time_limit))
                ws.append(time.perf_counter() - t0)
                bar.advance(task)
            series.append((label, rs))
            walls.append(ws)
    everything = [r for _, rs in series for r in rs]
    if a.json:
        print(json.dumps(_labelled_rows(series, lambda r: r.to_json()), indent=1))
    elif not a.quiet:
        from incastlab.plot import scenario_line

        for (_label, rs), ws in zip(series, walls, strict=True):
            out.print(f"[bold]incast emulate[/bold] · {scenario_line(rs[0])} · real Linux TCP")
            out.print(_table(rs, ws))
    if a.out:
        from incastlab.result.store import write_parquet

        write_parquet(everything, a.out)
    if a.plot:
        from incastlab.plot import goodput_vs_senders

        goodput_vs_senders(series, a.plot, title="Incast on real Linux TCP (namespaces)")
    return 0


def cmd_compare(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.backends.model import predict_scenario
    from incastlab.real import emulate

    # Each backend once, in the order given.
    backends = list(dict.fromkeys(b.strip() for b in a.backends.split(",") if b.strip()))
    for b in backends:
        if b not in ("sim", "emulate", "model"):
            raise UsageError(f"--backends: sim, emulate or model, got {b!r}")
    if a.plot and backends == ["model"]:
        raise UsageError("--plot: give sim or emulate too; the model is drawn over them")
    if "emulate" in backends:
        require_emulation()
        series_in = _emulate_points(a, err)
    else:
        series_in = _points(a)
    if len(series_in) != 1:
        raise UsageError("--vary: compare draws one scenario on several backends; drop --vary")
    ((_, pts),) = series_in
    by: dict[str, list[Result]] = {b: [] for b in backends}
    with _progress(err, "comparing", not a.json) as bar:
        task = bar.add_task("", total=len(pts) * len(backends))
        for sc in pts:
            for b in backends:
                bar.update(task, description=f"{b} N={sc.senders}")
                if b == "sim":
                    by[b].append(simulate(sc))
                elif b == "emulate":
                    by[b].append(emulate.run(sc, warmup=a.warmup, time_limit_s=a.time_limit))
                else:
                    by[b].append(predict_scenario(sc).result())
                bar.advance(task)
    results = dict(by)  # every backend, for --json
    model = [(r.senders, r.goodput_bps) for r in by.pop("model", [])]
    rows = []
    for i, sc in enumerate(pts):
        row: dict[str, Any] = {"senders": sc.senders}
        for b, rs in by.items():
            row[f"{b}_goodput_bps"] = rs[i].goodput_bps
            row[f"{b}_block_time_median_s"] = rs[i].row()["block_time_median_s"]
        if model:
            row["model_goodput_bps"] = model[i][1]
        if "sim" in by and "emulate" in by:
            row["emulate_vs_sim"] = by["emulate"][i].goodput_bps / by["sim"][i].goodput_bps - 1
        rows.append(row)
    if a.json:
        # One record per backend per point, point by point, backends in the order given.
        per_point = zip(*results.values(), strict=True)
        print(json.dumps([r.to_json() for rs in per_point for r in rs], indent=1))
    else:
        t = table()
        t.add_column("N", justify="right")
        for b in by:
            t.add_column(f"{b} goodput", justify="right")
            t.add_column(f"{b} block p50", justify="right")
        if model:
            t.add_column("model goodput", justify="right")
        if "emulate_vs_sim" in rows[0]:
            t.add_column("emulate vs sim", justify="right")
        for row in rows:
            cells = [str(row["senders"])]
            for b in by:
                cells += [
                    format_rate(row[f"{b}_goodput_bps"]),
                    format_time((row[f"{b}_block_time_median_s"] or 0) * 1e12),
                ]
            if model:
                cells.append(format_rate(row["model_goodput_bps"]))
            if "emulate_vs_sim" in row:
                cells.append(f"{100 * row['emulate_vs_sim']:+.0f}%")
            t.add_row(*cells)
        out.print(t)
    if a.plot:
        from incastlab.plot import goodput_vs_senders

        names = {"sim": "simulator", "emulate": "real Linux TCP (namespaces)"}
        series = [(names[b], rs) for b, rs in by.items()]
        overlay = [model] + [[]] * (len(series) - 1) if model else None
        goodput_vs_senders(
            series,
            a.plot,
            title="One scenario: simulator, real Linux TCP, model",
            model=overlay,
            model_label="model (Chen Eq. 1-4)",
        )
        err.print(f"wrote {a.plot}")
    return 0


def build_rto_random_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="incast model rto-random",
        description="RTO randomization (Hafeez et al.): N senders draw RTOs from "
        "U(RTOmin - delta/2, RTOmin + delta/2); the last to retransmit waits X = max. Prints "
        "E[X] (Eq. 6), its standard deviation (Eq. 7) and P(X > RTOmin + delta/4) (Eq. 4).",
        epilog="example:\n  incast model rto-random --rto-min 10ms --delta 4ms --senders 1..256 "
        "--plot ex.png",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--rto-min", default="10ms", help="RTOmin, e.g. 10ms")
    p.add_argument("--delta", default="4ms", help="randomization interval length, e.g. 4ms")
    p.add_argument("--senders", default="1,2,4,8,16,32,64,128,256", help="e.g. 1..256")
    p.add_argument("--json", action="store_true", help="print a JSON array")
    p.add_argument("--plot", metavar="FILE.png", help="draw E[X] against senders")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    out = Console(highlight=False)
    if not out.is_terminal:
        out = Console(highlight=False, width=140)
    err = Console(stderr=True, highlight=False)
    if args[:2] == ["model", "calibrate"]:
        try:
            return cmd_calibrate(args[2:], out, err)
        except (ScenarioError, UsageError) as e:
            err.print(f"[bold red]incast: error:[/bold red] {e}", soft_wrap=True)
            return 2
    if args[:2] == ["model", "rto-random"]:
        try:
            return cmd_rto_random(args[2:], out, err)
        except UsageError as e:
            err.print(f"[bold red]incast: error:[/bold red] {e}", soft_wrap=True)
            return 2
    parser = build_parser()
    a = parser.parse_args(args)
    if a.command is None:
        parser.print_help()
        return 2
    try:
        if a.command == "sim":
            return cmd_sim(a, out, err)
        if a.command == "model":
            return cmd_model(a, out, err)
        if a.command == "mitigate":
            return cmd_mitigate(a, out, err)
        if a.command == "emulate":
            return cmd_emulate(a, out, err)
        if a.command == "compare":
            return cmd_compare(a, out, err)
        from incastlab.cli import real as cli_real
        from incastlab.cli import sweep as cli_sweep

        done = cli_sweep.dispatch(a, out, err)
        if done is None:
            done = cli_real.dispatch(a, out, err)
        if done is not None:
            return done
    except (ScenarioError, UsageError) as e:
        err.print(f"[bold red]incast: error:[/bold red] {e}", soft_wrap=True)
        return 2
    except _core.SimulationError as e:
        err.print(f"[bold red]incast: simulation stopped:[/bold red] {e}", soft_wrap=True)
        return 1
    except EmulationError as e:
        err.print(f"[bold red]incast: emulation failed:[/bold red] {e}", soft_wrap=True)
        return 1
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/yellow]")
        return 130
    except BrokenPipeError:
        return 0
    return 2
