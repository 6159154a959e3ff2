#!/usr/bin/env python3
"""Summarises the JSON of `pipesim converge` (bench/convergence.sh) at more targets than the one
the command used: per schedule, iterations to each target (median over seeds, lower middle for
an even count, [min, max]) and the time to it with the run's time per iteration. With several
learning rates (`--lr 1e-3,3e-3`): each schedule at its best rate for each target, chosen by
the rule of tools/convergence.hpp (tuned_runs: the most seeds reaching the target, then the
fewest iterations, then the lowest mean final validation loss, then the lower rate), or with
--lr X every schedule at rate X.
  bench/convergence_summary.py docs/convergence/gpt-tiny-wide.json 3.2 3.05
  bench/convergence_summary.py --lr 0.003 docs/convergence/gpt-tiny-tuned.json 3.2 3.05"""
import argparse
import json


def first(curve, target):
    return next((p["iteration"] for p in curve if p["loss"] <= target), None)


def score(run, target):
    """tuned_runs' order (tools/convergence.hpp): smaller is better."""
    its = sorted(i for i in (first(c["validation"], target) for c in run["seeds"]) if i is not None)
    final = run["mean_final_validation_loss"]
    return (-len(its), its[(len(its) - 1) // 2] if its else float("inf"),
            final if final is not None else float("inf"), run["lr"])


def best_rates(every_rate, target):
    """Each schedule's run at its best rate for `target`, in the order of first appearance."""
    best = {}
    for run in every_rate:
        if run["schedule"] not in best or score(run, target) < score(best[run["schedule"]], target):
            best[run["schedule"]] = run
    return list(best.values())


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
    tuned = args.lr is None and "every_rate" in data
    for target in args.targets or [data["target"]]:
        print(f"target {target:.4f}: iterations (median [min, max]), time to target ({data.get('model', 'proxy')})"
              + (", each schedule at its best rate for this target" if tuned else ""))
        for s in best_rates(data["every_rate"], target) if tuned else runs:
            name = f"{s['schedule']:<{width}}  lr {s.get('lr', data['lr']):<6g}"
            its = sorted(i for i in (first(c["validation"], target) for c in s["seeds"]) if i is not None)
            if not its:
                print(f"  {name} not reached")
                continue
            median = its[(len(its) - 1) // 2]
            seconds = median * s["time_per_iteration_s"]
            print(f"  {name} {len(its)}/{len(s['seeds'])} {median:>4} [{its[0]}, {its[-1]}]  {seconds:8.3f} s")


if __name__ == "__main__":
    main()
