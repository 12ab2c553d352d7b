"""Sums a Chrome trace of bench/train_step_bench --trace by operator: per host thread,
the top-level operators (those not inside another operator on the same thread) with
their count and total wall time, slowest first; then the GPU kernels by name. Where a
step's host time goes when it issues work slower than the GPU runs it.

  python3 bench/trace_summary.py TRACE.json [TOP]
"""
import collections
import json
import sys


def main(path, top):
    events = json.load(open(path))['traceEvents']
    ops = [e for e in events if e.get('ph') == 'X' and e.get('cat') in ('cpu_op', 'user_annotation')]
    kernels = [e for e in events if e.get('ph') == 'X' and e.get('cat') == 'kernel']
    by_thread = collections.defaultdict(list)
    for e in ops:
        by_thread[e['tid']].append(e)
    for tid, thread_ops in by_thread.items():
        thread_ops.sort(key=lambda e: (e['ts'], -e['dur']))
        totals = collections.defaultdict(lambda: [0, 0.0])
        end = -1.0
        busy = 0.0
        for e in thread_ops:
            if e['ts'] >= end:  # top level: starts after the enclosing one ended
                totals[e['name']][0] += 1
                totals[e['name']][1] += e['dur']
                busy += e['dur']
                end = e['ts'] + e['dur']
        print(f'host thread {tid}: {busy / 1000:.1f} ms in top-level operators')
        for name, (count, us) in sorted(totals.items(), key=lambda kv: -kv[1][1])[:top]:
            print(f'  {count:5d} {us / 1000:8.2f} ms {us / count:8.1f} us/each  {name[:110]}')
    if kernels:
        totals = collections.defaultdict(lambda: [0, 0.0])
        for e in kernels:
            totals[e['name']][0] += 1
            totals[e['name']][1] += e['dur']
        print(f'GPU kernels: {len(kernels)}, {sum(e["dur"] for e in kernels) / 1000:.1f} ms')
        for name, (count, us) in sorted(totals.items(), key=lambda kv: -kv[1][1])[:top]:
            print(f'  {count:5d} {us / 1000:8.2f} ms {us / count:8.1f} us/each  {name[:110]}')


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40)
