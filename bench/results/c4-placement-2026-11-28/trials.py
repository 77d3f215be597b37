#!/usr/bin/env python3
"""Interleaved quick trials: wrk against tachyon builds and the floor, server CPU
from /proc. A name ending in +pin pins worker i to CPU i (taskset on each thread).

    trials.py ROUNDS SECONDS "64k t2 c4,1k t2 c4" "cur=/path/tachyon,cur+pin=/path/tachyon,floor=x"
"""
import os, subprocess, sys, time, re, socket, statistics as st
# A folder with tachyon-bench's 1k, 16k and 64k files; the floor is tachyon-bench's.
WWW = os.environ.get('WWW', 'www')
BENCH = os.environ.get('BENCH', 'target/release/tachyon-bench')
def cpu(pid):
    tot = 0
    for tid in os.listdir(f'/proc/{pid}/task'):
        f = open(f'/proc/{pid}/task/{tid}/stat').read().rsplit(')', 1)[1].split()
        tot += int(f[11]) + int(f[12])
    return tot / os.sysconf('SC_CLK_TCK')
def free_port():
    s = socket.socket(); s.bind(('127.0.0.1', 0)); p = s.getsockname()[1]; s.close(); return p
def start(name, bin_):
    port = free_port()
    if name.startswith('floor'):
        cmd = [BENCH, 'floor', '--port', str(port), '--threads', '2', '--root', WWW]
    else:
        cmd = [bin_, WWW, '--threads', '2', '--quiet', '--cache-dir', 'off', '--listen', f'127.0.0.1:{port}', '--listing']
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(('127.0.0.1', port), timeout=0.2).close(); break
        except OSError: time.sleep(0.1)
    time.sleep(1.0)
    if name.endswith('+pin'):
        tids = sorted((int(t) for t in os.listdir(f'/proc/{p.pid}/task') if int(t) != p.pid))
        named = {}
        for tid in tids:
            comm = open(f'/proc/{p.pid}/task/{tid}/comm').read().strip()
            m = re.match(r'tachyon-worker-(\d+)$', comm)
            if m: named[tid] = int(m.group(1))
        if not named: named = {t: i for i, t in enumerate(tids)}
        for tid, cpu_ in named.items():
            subprocess.run(['taskset', '-pc', str(cpu_ % 2), str(tid)], capture_output=True, check=True)
    return p, port
def run(name, bin_, cell, secs):
    size, t, c = cell.split()
    p, port = start(name, bin_)
    try:
        subprocess.run(['wrk', f'-{t}', f'-{c}', '-d1s', f'http://127.0.0.1:{port}/{size}'], capture_output=True)
        c0 = cpu(p.pid); t0 = time.time()
        out = subprocess.run(['wrk', f'-{t}', f'-{c}', f'-d{secs}s', f'http://127.0.0.1:{port}/{size}'], capture_output=True, text=True).stdout
        c1 = cpu(p.pid)
        n = int(re.search(r'(\d+) requests in', out).group(1))
        return n / secs, n / (c1 - c0)
    finally:
        p.kill(); p.wait()
if __name__ == '__main__':
    rounds = int(sys.argv[1]); secs = int(sys.argv[2]); cells = sys.argv[3].split(','); servers = [s.split('=') for s in sys.argv[4].split(',')]
    res = {}
    for r in range(rounds):
        for cell in cells:
            for name, bin_ in servers:
                rps, eff = run(name, bin_, cell, secs)
                res.setdefault((cell, name), []).append((rps, eff))
                print(f'round {r+1} {cell:12} {name:10} {rps/1e3:7.1f}k req/s {eff/1e3:7.1f}k per CPU-s', flush=True)
    print()
    for (cell, name), v in res.items():
        print(f'{cell:12} {name:10} median {st.median(x[0] for x in v)/1e3:7.1f}k req/s {st.median(x[1] for x in v)/1e3:7.1f}k per CPU-s  per-CPU rounds {[round(x[1]/1e3) for x in v]}')
