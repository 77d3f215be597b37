// Placement experiment: keep-alive 1 KiB responses from N epoll workers.
// mode 0: SO_REUSEPORT hash, workers free. mode 1: workers pinned to CPU i,
// new connections steered to the worker of the CPU that took the SYN.
// mode 2: mode 1, and a connection whose requests arrive on another CPU
// (SO_INCOMING_CPU, checked every CHECK requests) moves to that CPU's worker.
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
struct conn { int reqs; };
static struct conn conns[65536];
static void *worker(void *arg) {
  int w = (int)(long)arg;
  if (mode >= 1) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(w, &s); pthread_setaffinity_np(pthread_self(), sizeof s, &s); }
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
        conns[c].reqs = 0;
        struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
        epoll_ctl(eps[w], EPOLL_CTL_ADD, c, &ce);
        continue;
      }
      ssize_t r = recv(fd, buf, sizeof buf, 0);
      if (r <= 0) { if (r == 0 || (r < 0)) { epoll_ctl(eps[w], EPOLL_CTL_DEL, fd, 0); close(fd); } continue; }
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
  if (mode >= 1) {
    struct sock_filter code[] = {{BPF_LD | BPF_W | BPF_ABS, 0, 0, SKF_AD_OFF + SKF_AD_CPU}, {BPF_RET | BPF_A, 0, 0, 0}};
    struct sock_fprog prog = {.len = 2, .filter = code};
    if (setsockopt(lfd[0], SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog)) { perror("cbpf"); return 1; }
  }
  pthread_t t[N];
  for (long w = 0; w < N; w++) pthread_create(&t[w], 0, worker, (void *)w);
  for (;;) { sleep(1); if (mode == 2) { static unsigned long last; unsigned long m = moves; if (m != last) { fprintf(stderr, "moves %lu\n", m); last = m; } } }
}
