import json,sys,statistics as st,collections
d=json.load(open(sys.argv[1]))
ev=d['traceEvents'] if isinstance(d,dict) else d
names={e['pid']:e['args']['name'] for e in ev if e.get('name')=='process_name'}
for grp in ('predicted','measured'):
  ps=[p for p in names if names[p].startswith(grp)]
  comp={p:sorted([e for e in ev if e.get('pid')==p and e.get('ph')=='X' and e['tid']==0],key=lambda e:e['ts']) for p in ps}
  sends=collections.defaultdict(list)
  for p in ps:
    for e in ev:
      if e.get('pid')==p and e.get('ph')=='X' and e.get('cat')=='send': sends[e['args']['from']].append(e['args']['peer'])
  pid_of_dev={int(names[p].split()[-1]):p for p in ps}
  def busy(p,t):
    return any(e['ts']<=t<e['ts']+e['dur'] for e in comp[p])
  res=collections.defaultdict(list)
  for p in ps:
    c=comp[p]
    for a,b in zip(c,c[1:]):
      g=b['ts']-(a['ts']+a['dur'])
      peers=sends.get(a['name'],[])
      k='no send' if not peers else 'send, receiver '+('busy' if busy(pid_of_dev[peers[0]], a['ts']+a['dur']) else 'idle')
      res[k].append(g)
  for k,v in sorted(res.items()): print(grp,'  %-24s n %3d median %6.1f us  <100us: n %d median %.1f'%(k,len(v),st.median(v),len([x for x in v if x<100]), st.median([x for x in v if x<100] or [0])))
