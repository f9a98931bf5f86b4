// What the syncs of one delivery cost on this disk, alone and overlapped
// (docs/benchmarks.md, "The one-client bound"). Not part of CI.
//
//   cc -O2 -pthread bench/synccost/synccost.c -o /tmp/synccost
//   /tmp/synccost DIR [N]     (DIR on the filesystem under test; N = 200)
//
// Each of N rounds writes a 20,000-byte message as an unnamed file
// (O_TMPFILE) in DIR/d and names it (linkat), and appends six 4 KiB pages
// to DIR/wal (a WAL commit's size), in the orders below; each line is the
// mean time of a round.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char message[20000];
static char pages[6 * 4096];
static int dir_fd, wal_fd, counter;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void* sync_fd(void* fd) {
  fsync((int)(long)fd);
  return NULL;
}

static void* commit(void* unused) {
  (void)unused;
  if (write(wal_fd, pages, sizeof pages) != (ssize_t)sizeof pages) {
    perror("write");
  }
  fdatasync(wal_fd);
  return NULL;
}

static void link_file(int fd) {
  char from[64], to[64];
  snprintf(from, sizeof from, "/proc/self/fd/%d", fd);
  snprintf(to, sizeof to, "d/m%d.%d", (int)getpid(), counter++);
  if (linkat(AT_FDCWD, from, AT_FDCWD, to, AT_SYMLINK_FOLLOW) != 0) {
    perror("linkat");
  }
}

enum { kFileThenCommit, kAllAtOnce, kFileOnly, kCommitOnly, kOrders };
static const char* const kNames[] = {
    "file fsync, link, dir fsync, then commit (two levels)",
    "link, then file fsync + dir fsync + commit at once (one level)",
    "file fsync and link only",
    "commit only (6 pages + fdatasync)",
};

int main(int argc, char** argv) {
  if (argc < 2 || chdir(argv[1]) != 0) {
    fprintf(stderr, "usage: synccost DIR [N]\n");
    return 2;
  }
  const int n = argc > 2 ? atoi(argv[2]) : 200;
  memset(message, 'x', sizeof message);
  mkdir("d", 0700);
  dir_fd = open("d", O_RDONLY | O_DIRECTORY);
  wal_fd = open("wal", O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (dir_fd < 0 || wal_fd < 0) {
    perror("open");
    return 1;
  }
  for (int order = 0; order < kOrders; ++order) {
    const double start = now_ms();
    for (int i = 0; i < n; ++i) {
      int fd = open("d", O_TMPFILE | O_WRONLY, 0600);
      if (fd < 0 || write(fd, message, sizeof message) != (ssize_t)sizeof message) {
        perror("O_TMPFILE");
        return 1;
      }
      pthread_t a, b;
      switch (order) {
        case kFileThenCommit:
          fsync(fd);
          link_file(fd);
          pthread_create(&a, NULL, sync_fd, (void*)(long)dir_fd);
          commit(NULL);
          pthread_join(a, NULL);
          break;
        case kAllAtOnce:
          link_file(fd);
          pthread_create(&a, NULL, sync_fd, (void*)(long)fd);
          pthread_create(&b, NULL, sync_fd, (void*)(long)dir_fd);
          commit(NULL);
          pthread_join(a, NULL);
          pthread_join(b, NULL);
          break;
        case kFileOnly:
          fsync(fd);
          link_file(fd);
          break;
        case kCommitOnly:
          commit(NULL);
          break;
      }
      close(fd);
    }
    printf("%6.3f ms  %s\n", (now_ms() - start) / n, kNames[order]);
  }
  return 0;
}
