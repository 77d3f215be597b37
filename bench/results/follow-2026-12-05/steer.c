// Placement experiment: keep-alive 1 KiB responses from N epoll workers.
// mode 0: SO_REUSEPORT hash, workers free. mode 1: workers pinned to CPU i,
// new connections steered to the worker of the CPU that took the SYN.
// mode 2: mode 1, and a connection whose requests arrive on another CPU
// (SO_INCOMING_CPU, checked every CHECK requests) moves to that CPU's worker.
// mode 3: the hash with the count rule at accept (a worker holding more than
// the other by 1/16 of all hands a new connection over), workers pinned, and
// a connection follows its CPU as in mode 2 only while the receiving worker
// ends with at most as many as the sender, or one of its own wants the
// sender's CPU (an exchange). mode 4: the hash, workers pinned, nothing more.
// mode 6: the hash with the count rule at accept, workers free.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#define N 2
#define CHECK 8
static int mode, port, eps[N], lfd[N];
static char resp[2048]; static int resp_len;
static unsigned long moves;
static int load[N]; static int wants[N][N];
struct conn { int reqs; int want; };
static struct conn conns[65536];
static void *worker(void *arg) {
  int w = (int)(long)arg;
  if (mode >= 1 && mode <= 4) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(w, &s); pthread_setaffinity_np(pthread_self(), sizeof s, &s); }
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd[w]};
  epoll_ctl(eps[w], EPOLL_CTL_ADD, lfd[w], &ev);
  struct epoll_event evs[64]; char buf[4096];
  for (;;) {
    int n = epoll_wait(eps[w], evs, 64, -1);
    for (int i = 0; i < n; i++) {
      int fd = evs[i].data.fd;
      if (fd == lfd[w]) {
        int c = accept4(fd, 0, 0, SOCK_NONBLOCK);
        if (c < 0) continue;
        int one = 1; setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conns[c].reqs = 0; conns[c].want = -1;
        int to = w;
        if (mode == 3 || mode == 6) {
          int lw = __atomic_load_n(&load[w], __ATOMIC_RELAXED), lo = __atomic_load_n(&load[1 - w], __ATOMIC_RELAXED);
          if (lw > lo + (lw + lo) / 16) to = 1 - w;
        }
        __atomic_add_fetch(&load[to], 1, __ATOMIC_RELAXED);
        struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
        epoll_ctl(eps[to], EPOLL_CTL_ADD, c, &ce);
        continue;
      }
      ssize_t r = recv(fd, buf, sizeof buf, 0);
      if (r <= 0) { if (r == 0 || (r < 0)) { epoll_ctl(eps[w], EPOLL_CTL_DEL, fd, 0); if (conns[fd].want >= 0) __atomic_sub_fetch(&wants[w][conns[fd].want], 1, __ATOMIC_RELAXED); __atomic_sub_fetch(&load[w], 1, __ATOMIC_RELAXED); close(fd); } continue; }
      send(fd, resp, resp_len, 0);
      if (mode == 2 && ++conns[fd].reqs % CHECK == 0) {
        int cpu; socklen_t l = sizeof cpu;
        if (getsockopt(fd, SOL_SOCKET, SO_INCOMING_CPU, &cpu, &l) == 0 && cpu >= 0 && cpu < N && cpu != w) {
          epoll_ctl(eps[w], EPOLL_CTL_DEL, fd, 0);
          struct epoll_event ce = {.events = EPOLLIN, .data.fd = fd};
          epoll_ctl(eps[cpu], EPOLL_CTL_ADD, fd, &ce);
          __atomic_add_fetch(&moves, 1, __ATOMIC_RELAXED);
        }
      }

      if (mode == 3 && ++conns[fd].reqs % CHECK == 0) {
        int cpu; socklen_t l = sizeof cpu;
        if (getsockopt(fd, SOL_SOCKET, SO_INCOMING_CPU, &cpu, &l) == 0 && cpu >= 0 && cpu < N) {
          int old = conns[fd].want, nw = cpu != w ? cpu : -1;
          if (old != nw) {
            if (old >= 0) __atomic_sub_fetch(&wants[w][old], 1, __ATOMIC_RELAXED);
            if (nw >= 0) __atomic_add_fetch(&wants[w][nw], 1, __ATOMIC_RELAXED);
            conns[fd].want = nw;
          }
          if (nw >= 0) {
            int lv = __atomic_load_n(&load[nw], __ATOMIC_RELAXED), lw = __atomic_load_n(&load[w], __ATOMIC_RELAXED);
            if (lv + 1 <= lw || __atomic_load_n(&wants[nw][w], __ATOMIC_RELAXED) > 0) {
              __atomic_sub_fetch(&wants[w][nw], 1, __ATOMIC_RELAXED); conns[fd].want = -1;
              __atomic_sub_fetch(&load[w], 1, __ATOMIC_RELAXED); __atomic_add_fetch(&load[nw], 1, __ATOMIC_RELAXED);
              epoll_ctl(eps[w], EPOLL_CTL_DEL, fd, 0);
              struct epoll_event ce = {.events = EPOLLIN, .data.fd = fd};
              epoll_ctl(eps[nw], EPOLL_CTL_ADD, fd, &ce);
              __atomic_add_fetch(&moves, 1, __ATOMIC_RELAXED);
            }
          }
        }
      }
    }
  }
}
int main(int argc, char **argv) {
  mode = atoi(argv[1]); port = atoi(argv[2]);
  resp_len = sprintf(resp, "HTTP/1.1 200 OK\r\nServer: s\r\nContent-Length: 1024\r\nContent-Type: application/octet-stream\r\n\r\n");
  memset(resp + resp_len, 'x', 1024); resp_len += 1024;
  for (int w = 0; w < N; w++) {
    eps[w] = epoll_create1(0);
    lfd[w] = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1; setsockopt(lfd[w], SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(lfd[w], (void *)&a, sizeof a)) { perror("bind"); return 1; }
    listen(lfd[w], 1024);
  }
  if (mode == 1 || mode == 2) {
    struct sock_filter code[] = {{BPF_LD | BPF_W | BPF_ABS, 0, 0, SKF_AD_OFF + SKF_AD_CPU}, {BPF_RET | BPF_A, 0, 0, 0}};
    struct sock_fprog prog = {.len = 2, .filter = code};
    if (setsockopt(lfd[0], SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog)) { perror("cbpf"); return 1; }
  }
  pthread_t t[N];
  for (long w = 0; w < N; w++) pthread_create(&t[w], 0, worker, (void *)w);
  for (;;) { sleep(1); if (mode == 2 || mode == 3) { static unsigned long last; unsigned long m = moves; if (m != last) { fprintf(stderr, "moves %lu\n", m); last = m; } } }
}
