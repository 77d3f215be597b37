import os, sys, time, glob
# usage: coloc2.py PID ; samples every 2 ms: h2load's CPU vs each worker's; per 100 ms prints worker CPU ms and co-location share
pid = sys.argv[1]
ws = [t for t in os.listdir(f'/proc/{pid}/task') if open(f'/proc/{pid}/task/{t}/comm').read().startswith('tachyon-worker')]
def stat(path):
    f = open(path).read().rsplit(')', 1)[1].split()
    return int(f[36]), int(f[11]) + int(f[12]), f[0]
def h2():
    for p in os.listdir('/proc'):
        if p.isdigit():
            try:
                if open(f'/proc/{p}/comm').read().strip() == 'h2load': return p
            except Exception: pass
while not (h := h2()): time.sleep(0.01)
t0 = time.time(); last = t0; co = [0]*len(ws); n = 0; cpu0 = [stat(f'/proc/{pid}/task/{w}/stat')[1] for w in ws]
while True:
    try:
        hc = stat(f'/proc/{h}/stat')
    except Exception: break
    for i, w in enumerate(ws):
        c, _, st = stat(f'/proc/{pid}/task/{w}/stat')
        if c == hc[0] and st == 'R' and hc[2] == 'R': co[i] += 1
    n += 1
    time.sleep(0.002)
    if time.time() - last >= 0.1:
        cpu = [stat(f'/proc/{pid}/task/{w}/stat')[1] for w in ws]
        print(f'{time.time()-t0:5.2f} cpu_ticks {[b-a for a,b in zip(cpu0,cpu)]} both-running-same-cpu {[round(x/n,2) for x in co]} h2load_cpu {hc[0]}', flush=True)
        cpu0 = cpu; co = [0]*len(ws); n = 0; last = time.time()
