# Memory per idle HTTP/3 connection, before and after malloc_trim(0) in the server.
import subprocess, time, sys, os, signal
BIN = sys.argv[1]; N = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
BENCH = '/work/main/target/release/tachyon-bench'
def rss(pid):
    for l in open(f'/proc/{pid}/status'):
        if l.startswith('VmRSS'): return int(l.split()[1]) * 1024
srv = subprocess.Popen([BIN, '/tmp/s27/site', '--listen', '127.0.0.1:0', '--https', '127.0.0.1:18443',
    '--tls-cert', '/tmp/s27/cert.pem', '--tls-key', '/tmp/s27/key.pem', '-t', '2', '--cache-dir', 'off', '--quiet'],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
time.sleep(1.5)
url = 'https://127.0.0.1:18443/index.html'
subprocess.run([BENCH, 'h3load', '--fresh', '-c100', '-n100', url], capture_output=True)
time.sleep(0.3)
rest = rss(srv.pid)
h = subprocess.Popen([BENCH, 'h3load', f'-c{N}', f'-n{N}', '--hold', '30', url], stdout=subprocess.PIPE, text=True)
buf = ''
while 'holding' not in buf:
    c = h.stdout.read(1)
    if not c: break
    buf += c
time.sleep(0.5)
loaded = rss(srv.pid)
print(f'rest {rest/1e6:.1f} MB loaded {loaded/1e6:.1f} MB per conn {(loaded-rest)/N:.0f} B')
subprocess.run(['gdb', '-p', str(srv.pid), '-batch', '-ex', 'call (int)malloc_trim(0)'], capture_output=True)
trimmed = rss(srv.pid)
print(f'after malloc_trim: {trimmed/1e6:.1f} MB per conn {(trimmed-rest)/N:.0f} B')
h.kill(); os.killpg(srv.pid, signal.SIGKILL)
