// Experiment (2026-11-26), not product code: an io_uring floor for
// comparison with tachyon-bench's epoll floor (`tachyon-bench floor`).
// One thread per core, each with its own ring and SO_REUSEPORT listener:
// multishot accept, multishot recv into a provided buffer ring, and for
// every complete request head one send of a response precomputed at start
// (the same response whatever the path; no parsing, not a web server).
// Build: gcc -O2 -o urfloor urfloor.c -luring -lpthread  (liburing-dev 2.3)
//   add -DDIRECT for direct descriptors (accept_direct, fixed files).
// Run:   ./urfloor PORT THREADS FILE
#define _GNU_SOURCE
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#define NBUF 4096
#define BUFSZ 4096
#define BGID 1
enum { ACCEPT = 1, RECV = 2, SEND = 3 };
static char *resp; static size_t resp_len; static int port;
static int defer_taskrun = 1; // 'nodefer' as a 4th argument turns it off

static inline unsigned long long ud(int kind, int fd) { return ((unsigned long long)kind << 32) | (unsigned)fd; }

struct conn { size_t sent_off; int sending; };

static void *worker(void *arg) {
  (void)arg;
  struct io_uring ring; struct io_uring_params p = {0};
  p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN | (defer_taskrun ? IORING_SETUP_DEFER_TASKRUN : 0);
  p.flags |= IORING_SETUP_SUBMIT_ALL;
  if (io_uring_queue_init_params(4096, &ring, &p) < 0) { perror("queue_init"); exit(1); }
  int ls = socket(AF_INET, SOCK_STREAM, 0); int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, 4); setsockopt(ls, SOL_SOCKET, SO_REUSEPORT, &one, 4);
  setsockopt(ls, IPPROTO_TCP, TCP_NODELAY, &one, 4);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(0x7f000001)};
  if (bind(ls, (void *)&a, sizeof a) || listen(ls, 4096)) { perror("bind/listen"); exit(1); }
  // provided buffer ring
  size_t rsz = NBUF * sizeof(struct io_uring_buf);
  struct io_uring_buf_ring *br = mmap(NULL, rsz, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  char *bufs = malloc((size_t)NBUF * BUFSZ);
  struct io_uring_buf_reg reg = {.ring_addr = (unsigned long)br, .ring_entries = NBUF, .bgid = BGID};
  if (io_uring_register_buf_ring(&ring, &reg, 0)) { perror("buf_ring"); exit(1); }
  io_uring_buf_ring_init(br);
#ifdef DIRECT
  if (io_uring_register_files_sparse(&ring, 4096)) { perror("files"); exit(1); }
#define PREP_ACCEPT io_uring_prep_multishot_accept_direct
#define FIXED IOSQE_FIXED_FILE
#else
#define PREP_ACCEPT io_uring_prep_multishot_accept
#define FIXED 0
#endif
  int mask = io_uring_buf_ring_mask(NBUF);
  for (int i = 0; i < NBUF; i++) io_uring_buf_ring_add(br, bufs + (size_t)i * BUFSZ, BUFSZ, i, mask, i);
  io_uring_buf_ring_advance(br, NBUF);
  struct conn *conns = calloc(65536, sizeof *conns);
  struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
  PREP_ACCEPT(sqe, ls, NULL, NULL, 0); sqe->user_data = ud(ACCEPT, ls);
  for (;;) {
    io_uring_submit_and_wait(&ring, 1);
    struct io_uring_cqe *cqe; unsigned head, n = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      n++;
      int kind = cqe->user_data >> 32, fd = (int)(cqe->user_data & 0xffffffff), res = cqe->res;
      if (kind == ACCEPT) {
        if (res >= 0) {
#ifndef DIRECT
          setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one, 4);
#endif
          sqe = io_uring_get_sqe(&ring);
          io_uring_prep_recv_multishot(sqe, res, NULL, 0, 0);
          sqe->flags |= IOSQE_BUFFER_SELECT | FIXED; sqe->buf_group = BGID; sqe->user_data = ud(RECV, res);
        }
        if (!(cqe->flags & IORING_CQE_F_MORE)) {
          sqe = io_uring_get_sqe(&ring);
          PREP_ACCEPT(sqe, ls, NULL, NULL, 0); sqe->user_data = ud(ACCEPT, ls);
        }
      } else if (kind == RECV) {
        if (res > 0) {
          int bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
          char *b = bufs + (size_t)bid * BUFSZ;
          // count complete heads in this read (no pipelining expected)
          int heads = 0;
          for (int i = 0; i + 3 < res; i++) if (b[i] == '\r' && b[i+1] == '\n' && b[i+2] == '\r' && b[i+3] == '\n') heads++;
          io_uring_buf_ring_add(br, b, BUFSZ, bid, mask, 0);
          io_uring_buf_ring_advance(br, 1);
          for (int h = 0; h < heads; h++) {
            sqe = io_uring_get_sqe(&ring);
            io_uring_prep_send(sqe, fd, resp, resp_len, MSG_WAITALL);
            sqe->user_data = ud(SEND, fd);
            sqe->flags |= IOSQE_CQE_SKIP_SUCCESS | FIXED;
          }
          if (!(cqe->flags & IORING_CQE_F_MORE)) {
            sqe = io_uring_get_sqe(&ring);
            io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
            sqe->flags |= IOSQE_BUFFER_SELECT | FIXED; sqe->buf_group = BGID; sqe->user_data = ud(RECV, fd);
          }
        } else if (res == -ENOBUFS) {
          sqe = io_uring_get_sqe(&ring);
          io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
          sqe->flags |= IOSQE_BUFFER_SELECT | FIXED; sqe->buf_group = BGID; sqe->user_data = ud(RECV, fd);
        } else if (!(cqe->flags & IORING_CQE_F_MORE)) {
#ifdef DIRECT
          sqe = io_uring_get_sqe(&ring); io_uring_prep_close_direct(sqe, fd);
          sqe->user_data = 0; sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
#else
          close(fd);
#endif
        }
      } else if (kind == SEND) {
        if (res < 0) { /* peer gone; recv will see it */ }
      }
    }
    io_uring_cq_advance(&ring, n);
  }
  return conns;
}

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: urfloor PORT THREADS FILE [nodefer]\n"); return 2; }
  port = atoi(argv[1]); int threads = atoi(argv[2]);
  if (argc > 4) defer_taskrun = 0;
  int f = open(argv[3], O_RDONLY); struct stat st; fstat(f, &st);
  char head[256];
  int hl = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nServer: f\r\nDate: Thu, 26 Nov 2026 00:00:00 GMT\r\nContent-Type: application/octet-stream\r\nContent-Length: %ld\r\n\r\n", (long)st.st_size);
  resp_len = hl + st.st_size; resp = malloc(resp_len); memcpy(resp, head, hl);
  if (read(f, resp + hl, st.st_size) != st.st_size) return 1;
  pthread_t t[64];
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
}
