"""The model's error on a random held-out design (issue 32): simulate each point (pooled over
seeds), print median |model/sim - 1|, the share within 1.5x, the share flagged, the share
inside the model's interval, the errors by axis and the worst points.

    python benchmarks/model_error.py --points 300 --cache ~/.cache/incastlab/design
    python benchmarks/model_error.py --calibration --points 300 --cache ... --fit --save

``--calibration`` draws the calibration design (another seed) instead of the held-out one;
``--fit`` fits the constants on the design's points; ``--save`` writes them into the package.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from incastlab.model import design


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=300)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--calibration", action="store_true", help="the calibration design")
    ap.add_argument("--cache", help="keep simulated points here")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--sim-only", action="store_true", help="simulate, do not score")
    ap.add_argument("--fit", action="store_true", help="fit the constants on these points")
    ap.add_argument("--save", action="store_true", help="with --fit: save them in the package")
    ap.add_argument("--worst", type=int, default=15)
    ap.add_argument("--json", help="write every point and the summary to this file")
    a = ap.parse_args(argv)
    seed = design.CALIBRATION_SEED if a.calibration else design.HELD_OUT_SEED
    points = design.design(a.points, seed)
    t0 = time.monotonic()
    rows, unfinished = design.measure(
        points,
        seeds=a.seeds,
        cache=Path(a.cache).expanduser() if a.cache else None,
        workers=a.workers,
        on_point=lambda i, n: print(f"\r{i}/{n} runs", end="", file=sys.stderr),
    )
    print(f"\nsimulated in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    if a.sim_only:
        return 0
    constants = None
    if a.fit:
        from incastlab.model.fit import fit_design

        constants = fit_design(rows)
        print("fitted:", json.dumps(constants.to_json(), indent=1))
        if a.save:
            from incastlab.model import burst

            print("saved", burst.save(constants))
    design.score(rows, constants)
    s = design.summary(rows)
    print(f"design seed {seed}: {len(points)} points, {len(unfinished)} unfinished")
    for k, v in s.items():
        print(f"  {k}: {v:.3f}" if isinstance(v, float) else f"  {k}: {v}")
    for key, groups in design.by_axis(rows).items():
        print(key)
        for g, gs in groups.items():
            print(
                f"  {g:>22}: n={gs['points']:3d} median {gs['median_error']:.2f} "
                f"within1.5x {gs['within_1_5x']:.2f} flagged {gs['flagged']:.2f} "
                f"inside {gs['inside_interval']:.2f}"
            )
    print("worst points (model/sim):")
    for r in sorted(rows, key=lambda r: -abs(__import__("math").log(r.ratio)))[: a.worst]:
        flag = f" [flagged: {', '.join(r.flagged)}]" if r.flagged else ""
        print(
            f"  {r.ratio:7.2f}x model {r.model_bps / 1e6:9.1f} sim {r.sim_bps / 1e6:9.1f} Mbps "
            f"{r.regime:9} {design.label(r.point)}{flag}"
        )
    for u in unfinished:
        print("  unfinished:", u)
    if a.json:
        out = {
            "summary": s,
            "points": [
                {**r.point, "sim_bps": r.sim_bps, "by_seed": r.by_seed, "model_bps": r.model_bps,
                 "low_bps": r.low_bps, "high_bps": r.high_bps, "regime": r.regime,
                 "flagged": r.flagged}
                for r in rows
            ],
        }
        Path(a.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
