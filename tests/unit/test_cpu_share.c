/* Oversubscription of a row (issue 25): the other work beside a worker comes from the
 * machine's busy time less the worker's and the orchestrator's own CPU time, and a row is
 * oversubscribed when its threads plus that work exceed the CPUs (half a CPU of slack). */
#include <string.h>

#include "bench/cpu_share.h"
#include "test.h"

static void test_fill_and_flag(void) {
  nnp_bench_row w;
  memset(&w, 0, sizeof w);
  w.status = NNP_ROW_OK;
  w.threads = 2;
  /* 10 s of row; the machine was busy 19 CPU-s, the worker used 4, the orchestrator 0.2 */
  nnp_cpu_mark a = {.t = 100, .busy_s = 1000, .self_s = 1}, b = {.t = 110, .busy_s = 1019, .self_s = 1.2};
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  ru.ru_utime.tv_sec = 3;
  ru.ru_stime.tv_sec = 1;
  nnp_cpu_share_fill(&w, &a, &b, &ru);
  CHECK_NEAR(w.worker_cpu_s, 4.0, 1e-9);
  CHECK_NEAR(w.worker_wall_s, 10.0, 1e-9);
  CHECK_NEAR(w.other_cpus, 1.48, 1e-9); /* (19 - 4 - 0.2) / 10 */
  CHECK(nnp_row_oversubscribed(&w, 2));  /* 2 threads + 1.48 > 2.5 */
  CHECK(!nnp_row_oversubscribed(&w, 4)); /* 3.48 <= 4.5 */
  nnp_cpu_share_note(&w, 2);
  CHECK_MSG(strstr(w.note, "oversubscribed: other work kept 1.5 of 2 CPUs busy, its 2 threads had 0.5") != NULL,
            "note: '%s'", w.note);
  /* first in the note, before what the backend said (tables shorten long notes) */
  snprintf(w.note, sizeof w.note, "kernels: avx2+fma");
  nnp_cpu_share_note(&w, 2);
  CHECK_MSG(!strncmp(w.note, "oversubscribed: ", 16) && strstr(w.note, "; kernels: avx2+fma"), "note: '%s'", w.note);
  /* a quiet machine: no flag, no note */
  nnp_bench_row q = w;
  q.note[0] = '\0';
  q.other_cpus = 0.3;
  CHECK(!nnp_row_oversubscribed(&q, 2));
  nnp_cpu_share_note(&q, 2);
  CHECK(q.note[0] == '\0');
  /* more threads than CPUs, whatever the load; unknown load alone is no evidence */
  q.threads = 4;
  q.other_cpus = -1;
  CHECK(nnp_row_oversubscribed(&q, 2));
  q.threads = 2;
  CHECK(!nnp_row_oversubscribed(&q, 2));
  /* unreadable /proc/stat: unknown, never negative */
  a.busy_s = -1;
  nnp_cpu_share_fill(&w, &a, &b, &ru);
  CHECK(w.other_cpus == -1);
  /* pooling two processes: wall-weighted other work, CPU and wall added */
  nnp_bench_row p1 = {.worker_cpu_s = 1, .worker_wall_s = 1, .other_cpus = 2},
                p2 = {.worker_cpu_s = 2, .worker_wall_s = 3, .other_cpus = 0};
  nnp_cpu_share_pool(&p1, &p2);
  CHECK_NEAR(p1.other_cpus, 0.5, 1e-12);
  CHECK_NEAR(p1.worker_cpu_s, 3, 1e-12);
  CHECK_NEAR(p1.worker_wall_s, 4, 1e-12);
  /* the marks of this machine are readable and move forward */
  nnp_cpu_mark m1, m2;
  nnp_cpu_mark_now(&m1);
  nnp_cpu_mark_now(&m2);
  CHECK(m1.busy_s > 0 && m2.busy_s >= m1.busy_s && m2.t >= m1.t);
  CHECK(nnp_cpus_allowed() >= 1);
}

int main(void) {
  test_fill_and_flag();
  TEST_MAIN_END();
}
