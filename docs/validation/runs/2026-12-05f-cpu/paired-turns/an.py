# python3 an.py FOLDER: the pairs' errors, turn factors and their spread, A (turns 0.25 s) and B (1 s).
import json, glob, sys, statistics as st
rows = {'A': [], 'B': []}
for side in 'AB':
    for f in sorted(glob.glob(f'{sys.argv[1]}/p{side}*.json'), key=lambda x: int(x.split(side)[-1][:-5])):
        try:
            d = json.load(open(f))
        except Exception:
            print(f, 'no JSON'); continue
        cu = d['core_use']; t = cu['profile_turn_slowdown']; e = d['time_per_iteration_error']
        rows[side].append((e, t['F'], t['B'], t['OPT'], d['replay']['cost_model_ops_part'], d['speed_probes']['drift']))
        print(f.split('/')[-1], 'error %+6.1f %%' % (100 * e), 'ops part %+6.1f %%' % (100 * d['replay']['cost_model_ops_part']),
              'turns F x%.3f B x%.3f OPT x%.3f' % (t['F'], t['B'], t['OPT']), 'drift %.1f %%' % (100 * d['speed_probes']['drift']))
for side, r in rows.items():
    e = [x[0] for x in r]
    print(side, 'runs', len(e), 'within 5 %%: %d' % sum(abs(x) <= 0.05 for x in e), 'median %+.1f %%' % (100 * st.median(e)),
          'mean |error| %.1f %%' % (100 * st.mean(abs(x) for x in e)), 'sd %.1f %%' % (100 * st.pstdev(e)),
          'turn factors sd F %.3f B %.3f OPT %.3f' % tuple(st.pstdev([x[k] for x in r]) for k in (1, 2, 3)))
