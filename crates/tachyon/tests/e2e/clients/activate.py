"""Socket activation the way systemd does it (sd_listen_fds(3)), for the
specs: binds a TCP listener and a UDP socket on one free loopback port,
moves them to descriptors 3 and 4, sets LISTEN_FDS, LISTEN_PID (this
process's pid, which exec keeps) and LISTEN_FDNAMES, and execs the program.

    python3 activate.py NAME PROGRAM [ARG]...

The UDP socket is bound without SO_REUSEPORT, as systemd binds one by
default: no other socket can join its port, so a server that tried to bind
its own beside it would fail to start.
"""

import fcntl
import os
import socket
import sys

name = sys.argv[1]
tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
tcp.bind(("127.0.0.1", 0))
tcp.listen(128)
port = tcp.getsockname()[1]
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", port))
# Out of the way first, so that moving one to 3 cannot close the other.
high = [fcntl.fcntl(s.fileno(), fcntl.F_DUPFD, 10) for s in (tcp, udp)]
tcp.close()
udp.close()
for target, fd in zip((3, 4), high):
    os.dup2(fd, target, inheritable=True)
    os.close(fd)
os.environ.update(
    LISTEN_FDS="2",
    LISTEN_PID=str(os.getpid()),
    LISTEN_FDNAMES=f"{name}:{name}",
)
os.execvp(sys.argv[2], sys.argv[2:])
