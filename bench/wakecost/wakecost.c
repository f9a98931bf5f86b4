// What handing work to another thread costs on this machine, and whether the
// two threads then run at once (docs/benchmarks.md, "Threads on this
// machine"). Not part of CI.
//
//   cc -O2 -pthread bench/wakecost/wakecost.c -o /tmp/wakecost
//   /tmp/wakecost [ROUNDS]     (ROUNDS = 200)
//
// Three measurements, each the mean of ROUNDS rounds, each round after a
// 2 ms pause (so that a CPU left idle has gone to sleep, as between two
// deliveries of one client):
//   - a futex round trip between two threads, the scheduler placing them;
//   - the same with the threads pinned to CPUs 0 and 1;
//   - a hand-off: the main thread wakes a helper, then both spin for
//     300 us and the main thread waits for the helper's end. 300 us a
//     round means the two ran at once, 600 us that they shared one CPU;
//     run again pinned to CPUs 0 and 1.
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int rounds = 200;
static int pinned;
static int work_us;
static atomic_int go, done;

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void spin(int us) {
  const double end = now_us() + us;
  while (now_us() < end) {
  }
}

static void pin_to(int cpu) {
  if (!pinned) {
    return;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

static void wait_while(atomic_int* word, int value) {
  while (atomic_load(word) == value) {
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
  }
}

static void bump(atomic_int* word) {
  atomic_fetch_add(word, 1);
  syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void* helper(void* unused) {
  (void)unused;
  pin_to(1);
  for (int i = 0; i < rounds; ++i) {
    wait_while(&go, i);
    spin(work_us);
    bump(&done);
  }
  return NULL;
}

// Mean microseconds a round: wake the helper, spin work_us, wait for it.
static double measure(int pin, int work) {
  pinned = pin;
  work_us = work;
  atomic_store(&go, 0);
  atomic_store(&done, 0);
  pin_to(0);
  pthread_t thread;
  pthread_create(&thread, NULL, helper, NULL);
  double total = 0;
  for (int i = 0; i < rounds; ++i) {
    usleep(2000);
    const double start = now_us();
    bump(&go);
    spin(work);
    wait_while(&done, i);
    total += now_us() - start;
  }
  pthread_join(thread, NULL);
  if (pin) {  // let the main thread run anywhere again
    cpu_set_t all;
    CPU_ZERO(&all);
    CPU_SET(0, &all);
    CPU_SET(1, &all);
    sched_setaffinity(0, sizeof all, &all);
  }
  return total / rounds;
}

int main(int argc, char** argv) {
  if (argc > 1) {
    rounds = atoi(argv[1]);
    if (rounds < 1 || rounds > 100000) {
      fprintf(stderr, "usage: %s [ROUNDS: 1..100000]\n", argv[0]);
      return 64;
    }
  }
  printf("futex round trip, placed by the scheduler: %6.1f us\n", measure(0, 0));
  printf("futex round trip, CPUs 0 and 1:           %6.1f us\n", measure(1, 0));
  printf("hand-off of 300 us each, placed:          %6.1f us (300: at once, 600: one CPU)\n",
         measure(0, 300));
  printf("hand-off of 300 us each, CPUs 0 and 1:    %6.1f us\n", measure(1, 300));
  return 0;
}
