#!/usr/bin/env python3
"""Past `validate --json` runs' errors rescaled to other core speeds (docs/validation/runs/2026-12-05e-cpu).

Each CPU run's JSON has the cores' probes before and after it (`speed_probes`); its prediction
scales with the cores' factor, so its error at other factors is (1 + error) x other / used - 1,
where `used` is the factors its prediction took (`applied`, or `before` in runs older than it).
Prints, per folder: runs, within 5 % and mean |error| with the prediction at the probe before,
halfway between the probes, and at the probe after.

  bench/cpu-validation-halfway.py FOLDER...
"""
import glob
import json
import statistics
import sys


def runs(folder):
    for path in sorted(glob.glob(folder + "/**/*.json", recursive=True)):
        try:
            with open(path) as f:
                d = json.load(f)
        except (OSError, ValueError):
            continue
        if not isinstance(d, dict):
            continue
        for s in d.get("schedules", [d] if "schedule" in d else []):
            probes = s.get("speed_probes") or {}
            if probes.get("before") and probes.get("after"):
                yield s, probes


def main(folders):
    if not folders:
        sys.exit("usage: cpu-validation-halfway.py FOLDER...")
    print(f"{'folder':40} {'runs':>5}  within 5 %: before halfway after   mean |error|: before halfway after")
    for folder in folders:
        rows = []
        for s, p in runs(folder):
            before = statistics.mean(c["slowdown"] for c in p["before"])
            after = statistics.mean(c["slowdown"] for c in p["after"])
            used = statistics.mean(p["applied"]) if p.get("applied") else before
            ratio = 1 + s["time_per_iteration_error"]
            rows.append([ratio * f / used - 1 for f in (before, (before + after) / 2, after)])
        if not rows:
            print(f"{folder:40} {0:>5}")
            continue
        within = [sum(abs(r[i]) <= 0.05 for r in rows) for i in range(3)]
        mean = [100 * statistics.mean(abs(r[i]) for r in rows) for i in range(3)]
        print(f"{folder:40} {len(rows):>5}  {within[0]:>18} {within[1]:>7} {within[2]:>5}"
              f"   {mean[0]:>19.1f} % {mean[1]:>5.1f} % {mean[2]:>3.1f} %")


if __name__ == "__main__":
    main(sys.argv[1:])
