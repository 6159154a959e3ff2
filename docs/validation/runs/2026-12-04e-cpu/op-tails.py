import json,sys,collections,statistics as st
ev=json.load(open(sys.argv[1]))["traceEvents"]
names={e["pid"]:e["args"]["name"] for e in ev if e.get("ph")=="M" and e.get("name")=="process_name"}
for label in ("predicted","measured"):
    pids={p:int(n.split("device")[1].split()[0]) for p,n in names.items() if n.startswith(label+": device")}
    by=collections.defaultdict(list)
    for e in ev:
        if e.get("ph")=="X" and e["pid"] in pids and e["tid"]==0:
            k=e["name"].split("@")[0].lstrip("0123456789")
            kind=''.join(c for c in k if c.isalpha())
            by[(pids[e["pid"]],kind)].append(e["dur"])
    for (d,k),v in sorted(by.items()):
        v.sort(); med=v[len(v)//2]; mean=sum(v)/len(v)
        print(f"{label:9} dev{d} {k:4} n={len(v):4} med={med:8.1f} mean={mean:8.1f} mean/med={mean/med:5.3f} p90={v[int(.9*len(v))]:8.1f} max={v[-1]:8.1f} sum={sum(v)/1e3:8.2f}ms excess={(sum(v)-med*len(v))/1e3:6.2f}ms")
