// Experiment: the cheapest way to send one static body over loopback.
// usage: splicefloor PORT MODE FILE   (MODE: memfd | file | thp | anon | copy)
// Two threads, SO_REUSEPORT listeners, epoll, NOTSENT_LOWAT 1 MiB.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static int mode; // 0 memfd, 1 file, 2 thp, 3 anon, 4 memfd mapping, 5 copy
static int body_fd;
static char *body;
static size_t body_len;
static char head[256];
static size_t head_len;
static int port;
static int lowat = 1 << 20;
static size_t psz;
static int nodelay;

struct conn {
  int fd;
  int pipe[2];
  size_t inpipe; // bytes in pipe
  size_t off;    // body bytes handed to pipe or socket
  size_t hoff;
  int sending;
  int close_after;
  char buf[2048];
  size_t blen;
};

static int listener(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "cubic", 5);
  setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof lowat);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(0x7f000001)};
  if (bind(fd, (void *)&a, sizeof a) || listen(fd, 4096)) { perror("bind"); exit(1); }
  return fd;
}

static void drop(struct conn *c) {
  close(c->fd);
  if (c->pipe[0] >= 0) { close(c->pipe[0]); close(c->pipe[1]); }
  free(c);
}

// 1: done, 0: blocked, -1: error
static int push(struct conn *c) {
  while (mode != 5 && c->hoff < head_len) {
    ssize_t n = send(c->fd, head + c->hoff, head_len - c->hoff, MSG_MORE | MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN ? 0 : -1;
    c->hoff += n;
  }
  if (mode == 5) {
    // copy: head and body in one writev, as tachyon sends a heap body
    while (c->off < body_len) {
      struct iovec v[2];
      int k = 0;
      if (c->hoff < head_len) { v[k].iov_base = head + c->hoff; v[k].iov_len = head_len - c->hoff; k++; }
      v[k].iov_base = body + c->off; v[k].iov_len = body_len - c->off; k++;
      ssize_t n = writev(c->fd, v, k);
      if (n < 0) return errno == EAGAIN ? 0 : -1;
      size_t h = head_len - c->hoff < (size_t)n ? head_len - c->hoff : (size_t)n;
      c->hoff += h; c->off += n - h;
    }
    return 1;
  }
  for (;;) {
    if (mode <= 1) {
      if (c->off >= body_len) return 1;
      off_t o = c->off;
      size_t want = body_len - c->off;
      if (want > (1 << 20)) want = 1 << 20;
      ssize_t n = sendfile(c->fd, body_fd, &o, want);
      if (n < 0) return errno == EAGAIN ? 0 : -1;
      c->off += n;
    } else {
      if (c->inpipe == 0 && c->off >= body_len) return 1;
      if (c->inpipe == 0) {
        size_t want = body_len - c->off;
        if (want > psz) want = psz;
        struct iovec v = {body + c->off, want};
        ssize_t n = vmsplice(c->pipe[1], &v, 1, SPLICE_F_NONBLOCK);
        if (n < 0) { perror("vmsplice"); return -1; }
        c->off += n;
        c->inpipe = n;
      }
      ssize_t n = splice(c->pipe[0], NULL, c->fd, NULL, c->inpipe, SPLICE_F_NONBLOCK | (c->off < body_len ? SPLICE_F_MORE : 0));
      if (n < 0) return errno == EAGAIN ? 0 : -1;
      c->inpipe -= n;
    }
  }
}

static void *worker(void *arg) {
  (void)arg;
  int l = listener();
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
  epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
  struct epoll_event evs[256];
  for (;;) {
    int n = epoll_wait(ep, evs, 256, -1);
    for (int i = 0; i < n; i++) {
      struct conn *c = evs[i].data.ptr;
      if (!c) {
        for (;;) {
          int fd = accept4(l, NULL, NULL, SOCK_NONBLOCK);
          if (fd < 0) break;
          c = calloc(1, sizeof *c);
          c->fd = fd;
          if (nodelay) { int one = 1; setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); }
          c->pipe[0] = c->pipe[1] = -1;
          if (mode >= 2 && mode != 5) {
            pipe2(c->pipe, O_NONBLOCK);
            fcntl(c->pipe[1], F_SETPIPE_SZ, getenv("PSZ") ? atoi(getenv("PSZ")) : 1 << 20);
          }
          struct epoll_event e = {.events = EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP, .data.ptr = c};
          epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
        }
        continue;
      }
      if (!c->sending) {
        ssize_t r = recv(c->fd, c->buf + c->blen, sizeof c->buf - c->blen - 1, 0);
        if (r == 0 || (r < 0 && errno != EAGAIN)) { drop(c); continue; }
        if (r < 0) continue;
        c->blen += r;
        c->buf[c->blen] = 0;
        char *end = strstr(c->buf, "\r\n\r\n");
        if (!end) continue;
        c->close_after = strstr(c->buf, "HTTP/1.0") && !strcasestr(c->buf, "keep-alive");
        c->blen = 0;
        c->sending = 1;
        c->off = c->hoff = 0;
      }
      int p = push(c);
      if (p < 0) { drop(c); continue; }
      if (p == 1) {
        c->sending = 0;
        if (c->close_after) { drop(c); continue; }
      }
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: splicefloor PORT MODE FILE\n"); return 2; }
  port = atoi(argv[1]);
  if (getenv("LOWAT")) lowat = atoi(getenv("LOWAT"));
  nodelay = getenv("NODELAY") != NULL;
  psz = getenv("PSZ") ? atoi(getenv("PSZ")) : 1 << 20;
  const char *m = argv[2];
  mode = !strcmp(m, "memfd") ? 0 : !strcmp(m, "file") ? 1 : !strcmp(m, "thp") ? 2 : !strcmp(m, "anon") ? 3 : !strcmp(m, "copy") ? 5 : 4;
  int f = open(argv[3], O_RDONLY);
  struct stat st;
  fstat(f, &st);
  body_len = st.st_size;
  char *tmp = malloc(body_len);
  if (read(f, tmp, body_len) != (ssize_t)body_len) { perror("read"); return 1; }
  if (mode == 0) {
    body_fd = memfd_create("body", MFD_ALLOW_SEALING);
    write(body_fd, tmp, body_len);
    fcntl(body_fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW);
  } else if (mode == 1) {
    body_fd = f;
  } else if (mode == 5) {
    body = tmp;
  } else if (mode == 4) {
    body_fd = memfd_create("body", MFD_ALLOW_SEALING);
    write(body_fd, tmp, body_len);
    fcntl(body_fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW);
    body = mmap(NULL, body_len, PROT_READ, MAP_SHARED, body_fd, 0);
  } else {
    size_t sz = (body_len + (2 << 20) - 1) & ~((size_t)(2 << 20) - 1);
    char *raw = mmap(NULL, sz + (2 << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    body = (char *)(((size_t)raw + (2 << 20) - 1) & ~((size_t)(2 << 20) - 1));
    if (mode == 2) madvise(body, sz, MADV_HUGEPAGE);
    else madvise(body, sz, MADV_NOHUGEPAGE);
    memcpy(body, tmp, body_len);
    mprotect(body, sz, PROT_READ);
  }
  head_len = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nContent-Type: application/octet-stream\r\n\r\n", body_len);
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, NULL);
  fprintf(stderr, "ready pid %d\n", getpid());
  pthread_join(t[0], NULL);
}
