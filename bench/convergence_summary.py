#!/usr/bin/env python3
"""Summarises the JSON of `pipesim converge` (bench/convergence.sh) at more targets than the one
the command used: per schedule, iterations to each target (median over seeds, lower middle for
an even count, [min, max]) and the time to it with the run's time per iteration. With several
learning rates (`--lr 1e-3,3e-3`), each schedule at the rate the command chose for its own
target (`schedules`), or with --lr X every schedule at rate X (`every_rate`).
  bench/convergence_summary.py docs/convergence/gpt-tiny.json 3.2 3.05
  bench/convergence_summary.py --lr 0.003 docs/convergence/gpt-tiny-tuned.json 3.2 3.05"""
import argparse
import json


def first(curve, target):
    return next((p["iteration"] for p in curve if p["loss"] <= target), None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, help="every schedule at this rate (a file of several rates)")
    parser.add_argument("file")
    parser.add_argument("targets", nargs="*", type=float)
    args = parser.parse_args()
    data = json.load(open(args.file))
    runs = data["schedules"]
    if args.lr is not None:
        runs = [r for r in data.get("every_rate", data["schedules"]) if r["lr"] == args.lr]
        if not runs:
            raise SystemExit(f"{args.file}: no runs at lr {args.lr:g} (rates: {data['lr']})")
    width = max(len(r["schedule"]) for r in runs)
    for target in args.targets or [data["target"]]:
        print(f"target {target:.4f}: iterations (median [min, max]), time to target ({data.get('model', 'proxy')})")
        for s in runs:
            name = f"{s['schedule']:<{width}}  lr {s['lr']:<6g}"
            its = sorted(i for i in (first(c["validation"], target) for c in s["seeds"]) if i is not None)
            if not its:
                print(f"  {name} not reached")
                continue
            median = its[(len(its) - 1) // 2]
            seconds = median * s["time_per_iteration_s"]
            print(f"  {name} {len(its)}/{len(s['seeds'])} {median:>4} [{its[0]}, {its[-1]}]  {seconds:8.3f} s")


if __name__ == "__main__":
    main()
