# Per response: client and server µs of CPU, syscalls, switches; from pair.sh's files.
import glob, re, sys, os
d = sys.argv[1]
def stat(f):
    v = {}
    for l in open(f):
        p = l.strip().split(',')
        if len(p) > 3 and p[0] and p[0][0].isdigit():
            v[p[2]] = float(p[0])
    return v
def requests(f):
    t = open(f).read()
    m = re.search(r'(\d+) requests in', t) or re.search(r'Complete requests:\s+(\d+)', t) or re.search(r'requests: \d+ total, \d+ started, (\d+) done', t)
    return int(m.group(1))
for f in sorted(glob.glob(d + '/*.client.txt')):
    k = os.path.basename(f)[:-len('.client.txt')]
    n = requests(f.replace('.client.txt', '.client.out'))
    c, s = stat(f), stat(f.replace('client', 'server'))
    def row(v):
        g = lambda e: sum(x for kk, x in v.items() if kk.endswith(e))
        return (f"cpu {g('task-clock')*1e3/n:6.2f} µs sys {g('raw_syscalls:sys_enter')/n:5.2f} "
                f"epoll {g('epoll_wait')/n + g('epoll_pwait')/n:5.3f} rd {g('sys_enter_read')/n + g('recvfrom')/n:5.2f} "
                f"wr {g('sys_enter_write')/n + g('sendto')/n + g('writev')/n:5.2f} cs {g('context-switches')/n:5.3f}")
    print(f"{k:22} n={n:8d} | client {row(c)} | server {row(s)}")
