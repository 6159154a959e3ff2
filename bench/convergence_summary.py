#!/usr/bin/env python3
"""Summarises the JSON of `pipesim converge` (bench/convergence.sh) at more targets than the one
the command used: per schedule, iterations to each target (median over seeds, lower middle for
an even count, [min, max]) and the time to it with the run's time per iteration.
  bench/convergence_summary.py docs/convergence/gpt-tiny.json 3.2 3.05"""
import json
import sys


def first(curve, target):
    return next((p["iteration"] for p in curve if p["loss"] <= target), None)


def main():
    data = json.load(open(sys.argv[1]))
    targets = [float(t) for t in sys.argv[2:]] or [data["target"]]
    for target in targets:
        print(f"target {target:.4f}: iterations (median [min, max]), time to target ({data.get('model', 'proxy')})")
        for s in data["schedules"]:
            its = sorted(i for i in (first(c["validation"], target) for c in s["seeds"]) if i is not None)
            if not its:
                print(f"  {s['schedule']:<14} not reached")
                continue
            median = its[(len(its) - 1) // 2]
            seconds = median * s["time_per_iteration_s"]
            print(f"  {s['schedule']:<14} {len(its)}/{len(s['seeds'])} {median:>4} [{its[0]}, {its[-1]}]  {seconds:8.3f} s")


if __name__ == "__main__":
    main()
