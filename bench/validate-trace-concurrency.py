#!/usr/bin/env python3
"""Where a validated run's time goes, from `pipesim validate --trace T.json` (docs/validation/cpu.md).

    bench/validate-trace-concurrency.py T.json [--cores C] [--pinned]

For the predicted and the measured timeline each:
  - how long 0, 1, 2, ... compute ops ran at once (an op preempted by another device's thread
    counts as running: the executor's records are wall-clock), and the sum of op durations;
  - with --cores: per core, the time no op of its devices ran, split by why the op that ended
    the gap had not started: its input was not sent yet ("input not sent"), it was sent during
    the gap ("input sent during the gap": the part after), it was sent before the gap began
    ("input there before the gap"), or the op takes no message ("no message input"). Devices
    are on core d % C (--pinned, `validate` pinning d to core d % C); otherwise the gaps are of
    the whole machine (no op of any device on a core).
"""
import argparse
import collections

import validate_trace


def split(events, first_pid, devices):
    ops, sent = collections.defaultdict(list), {}
    for e in events:
        if e.get("ph") != "X" or not first_pid <= e["pid"] < first_pid + devices:
            continue
        if e["tid"] == 0:
            ops[e["pid"] - first_pid].append(e)
        elif e["tid"] == 1:
            sent[e["args"]["to"]] = e["ts"] + e["dur"]
    for timeline in ops.values():
        timeline.sort(key=lambda e: e["ts"])
    return ops, sent


def concurrency(ops):
    points = sorted(p for timeline in ops.values() for e in timeline for p in ((e["ts"], 1), (e["ts"] + e["dur"], -1)))
    running, last, spent = 0, points[0][0], collections.Counter()
    for t, step in points:
        spent[running] += t - last
        last, running = t, running + step
    total = sum(spent.values())
    busy = sum(e["dur"] for timeline in ops.values() for e in timeline)
    shares = "  ".join(f"{k}: {100 * v / total:5.1f} %" for k, v in sorted(spent.items()))
    return f"span {total / 1e3:8.1f} ms  ops {busy / 1e3:8.1f} ms  running at once  {shares}"


def gaps(ops, sent, devices_of_core):
    starts = {e["ts"]: e for d in devices_of_core for e in ops[d]}
    spans = sorted((e["ts"], e["ts"] + e["dur"]) for d in devices_of_core for e in ops[d])
    why, cursor = collections.Counter(), spans[0][0]
    for begin, end in spans:
        if begin > cursor:
            op = starts[begin]
            at = sent.get(op["name"])
            if at is None:
                why["no message input"] += begin - cursor
            elif at <= cursor:
                why["input there before the gap"] += begin - cursor
            else:
                why["input not sent"] += min(at, begin) - cursor
                why["input sent during the gap"] += max(0, begin - at)
        cursor = max(cursor, end)
    return sum(why.values()), why


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--cores", type=int, default=0)
    ap.add_argument("--pinned", action="store_true")
    a = ap.parse_args()
    events, predicted, measured = validate_trace.read(a.trace)
    devices = len(predicted)
    for label, pids in (("predicted", predicted), ("measured", measured)):
        first = pids[0]
        ops, sent = split(events, first, devices)
        print(f"{label:9}  {concurrency(ops)}")
        if a.cores <= 0:
            continue
        groups = [[d for d in ops if d % a.cores == c] for c in range(a.cores)] if a.pinned else [list(ops)]
        for c, group in enumerate(groups):
            total, why = gaps(ops, sent, group)
            where = f"core {c}" if a.pinned else "machine"
            parts = ", ".join(f"{k} {v / 1e3:.1f} ms" for k, v in why.most_common() if v > 0)
            print(f"{'':9}  {where}: no op running {total / 1e3:.1f} ms ({parts})")


if __name__ == "__main__":
    main()
