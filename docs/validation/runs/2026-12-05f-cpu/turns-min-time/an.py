import json,glob,sys,statistics as st,math
rows={}
for f in sorted(glob.glob(sys.argv[1] + '/p-*.json')):
    d=json.load(open(f)); sc=d['shared_core']
    mt=f.split('-')[-1][:-5]
    def mean(t): return t.get('mean_s') or t['median_s']
    def r(parts):
        a=sum(mean(sc[p]['times'][0]) for p in parts); b=sum(mean(sc[p]['times'][1]) for p in parts); return b/a
    n=sc['forward']['times'][1].get('repeats')
    rows.setdefault(mt,[]).append((r(['forward']),r(['input_grad','weight_grad']),r(['optimizer'])))
    print(f, 'F %.3f B %.3f OPT %.3f'%rows[mt][-1], 'n', n)
for mt,v in rows.items():
    for i,k in enumerate('F B OPT'.split()):
        x=[r[i] for r in v]; print(mt,k,'mean %.3f sd %.3f range %.3f..%.3f'%(st.mean(x),st.stdev(x) if len(x)>1 else 0,min(x),max(x)))
