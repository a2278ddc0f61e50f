import json
import sys

a = [json.loads(l) for l in open(sys.argv[1])]; b = [json.loads(l) for l in open(sys.argv[2])]
ka = {(r['f'], r['n'], r['eps'], r['prior'], r['loss']): r for r in a}
sa = sb = ta = tb = 0
for r in b:
    k = (r['f'], r['n'], r['eps'], r['prior'], r['loss']); o = ka[k]
    sa += o['steps']; sb += r['steps']; ta += o['s']; tb += r['s']
    if o['steps'] != r['steps'] or o['err'] or r['err']:
        print(k, o['steps'], '->', r['steps'], f"{o['s']:.1f}->{r['s']:.1f}", o['err'][:40], r['err'][:40])
print('steps', sa, sb, 'seconds %.1f %.1f' % (ta, tb))
