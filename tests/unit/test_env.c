/* Environment capture on this machine, and on fabricated /proc trees with odd contents. */
#define _XOPEN_SOURCE 700 /* nftw */

#include <ftw.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nnperf/env.h"
#include "test.h"

/* Not in the public header: capture with every path under root (see env.c). */
void nnp_env_capture_root(nnp_env *e, const char *root);

static const char *PY = "/usr/bin/python3";

/* Writes len bytes to root/rel, creating the folders on the way. */
static void put(const char *root, const char *rel, const char *data, size_t len) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  for (char *p = path + strlen(root) + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(path, 0755);
      *p = '/';
    }
  FILE *f = fopen(path, "wb");
  CHECK_MSG(f != NULL, "cannot create %s", path);
  if (!f) return;
  fwrite(data, 1, len, f);
  fclose(f);
}

static void puts_file(const char *root, const char *rel, const char *text) {
  put(root, rel, text, strlen(text));
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static void rm_tree(const char *root) { nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* Checks that s is valid UTF-8 without control characters (what the cleaner promises). */
static int clean_utf8(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    if (*p < 0x20 || *p == 0x7f) return 0;
    int len = *p < 0x80 ? 1 : (*p >= 0xc2 && *p <= 0xdf) ? 2 : (*p >= 0xe0 && *p <= 0xef) ? 3
              : (*p >= 0xf0 && *p <= 0xf4) ? 4 : 0;
    if (!len) return 0;
    for (int i = 1; i < len; i++)
      if ((p[i] & 0xc0) != 0x80) return 0;
    p += len;
  }
  return 1;
}

/* Writes e as JSON to a file and has python parse it; returns python's stdout line. */
static int json_check(const nnp_env *e, const char *expr, char *out, size_t cap) {
  char path[] = "/tmp/nnp_test_env_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return 0;
  FILE *f = fdopen(fd, "w");
  nnp_env_write_json(f, e);
  fclose(f);
  int ok = 0;
  out[0] = '\0';
  if (access(PY, X_OK) == 0) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s -c 'import json,sys; d=json.load(open(sys.argv[1], encoding=\"utf-8\")); "
             "print(%s)' %s 2>&1",
             PY, expr, path);
    FILE *p = popen(cmd, "r");
    if (p) {
      if (fgets(out, (int)cap, p)) out[strcspn(out, "\n")] = '\0';
      ok = pclose(p) == 0;
    }
    CHECK_MSG(ok, "python could not parse the env JSON: %s", out);
  } else {
    printf("note: %s not found, JSON parse check skipped\n", PY);
    ok = 1;
  }
  unlink(path);
  return ok;
}

static void test_this_machine(void) {
  nnp_env e;
  nnp_env_capture(&e);
  CHECK(e.cpus_online >= 1);
  CHECK(e.cpus_allowed >= 1);
  CHECK(e.mem_total_bytes > 0);
  CHECK(e.mem_available_bytes >= 0 && e.mem_available_bytes <= e.mem_total_bytes);
  CHECK(e.kernel[0] != '\0');
  CHECK(!strncmp(e.compiler, "gcc ", 4) || !strncmp(e.compiler, "clang ", 6));
  CHECK(strlen(e.timestamp) == 20 && e.timestamp[4] == '-' && e.timestamp[10] == 'T' &&
        e.timestamp[19] == 'Z');
  CHECK(e.loadavg1 >= 0.0);
#if defined(__x86_64__) || defined(__i386__)
  CHECK(e.cpu_model[0] != '\0');
  CHECK(strstr(e.cpu_flags, "sse4_2") != NULL); /* every x86-64-v2 machine */
#endif
#if defined(__SANITIZE_ADDRESS__)
  CHECK(strstr(e.build_flags, "asan") != NULL);
#endif
  CHECK(clean_utf8(e.cpu_model) && clean_utf8(e.os) && clean_utf8(e.hostname));
  printf("env: %s | %s | %d/%d cpus | %.0f MHz | gov '%s' | load %.2f | %s | %s | %s [%s] | gpu '%s'\n",
         e.cpu_model, e.cpu_flags, e.cpus_allowed, e.cpus_online, e.cpu_mhz, e.governor,
         e.loadavg1, e.os, e.kernel, e.compiler, e.build_flags, e.gpu);

  char out[512], want[128];
  if (json_check(&e, "d[\"cpus_online\"], d[\"mem_total_bytes\"], len(d)", out, sizeof out)) {
    snprintf(want, sizeof want, "%d %lld 17", e.cpus_online, (long long)e.mem_total_bytes);
    if (access(PY, X_OK) == 0) CHECK_MSG(!strcmp(out, want), "got '%s' want '%s'", out, want);
  }
}

static void test_fake_root(void) {
  char root[] = "/tmp/nnp_test_envroot_XXXXXX";
  CHECK(mkdtemp(root) != NULL);

  /* cpuinfo: invalid UTF-8 and a tab in the model name; a 20000-byte flags line whose
   * cut end falls inside "avx512fp16"; a NUL byte; two processors; no final newline. */
  static char cpuinfo[32768];
  size_t o = 0;
  o += (size_t)snprintf(cpuinfo + o, sizeof cpuinfo - o,
                        "processor\t: 0\nvendor_id\t: GenuineIntel\n"
                        "model name\t: Fake\xff CPU\t@ 3.00GHz   \ncpu MHz\t\t: 2999.5\n");
  size_t line_start = o;
  o += (size_t)snprintf(cpuinfo + o, sizeof cpuinfo - o, "flags\t\t: fpu avx2 fma");
  while (o < line_start + 8000) o += (size_t)snprintf(cpuinfo + o, sizeof cpuinfo - o, " junkflag");
  /* env.c reads 8191 bytes of a line: pad so that they end in " avx512f" */
  while (o < line_start + 8191 - 8) cpuinfo[o++] = 'x';
  o += (size_t)snprintf(cpuinfo + o, sizeof cpuinfo - o, " avx512fp16 sse4_2\n");
  o += (size_t)snprintf(cpuinfo + o, sizeof cpuinfo - o, "bogus line without colon\n");
  cpuinfo[o++] = '\0';
  o += (size_t)snprintf(cpuinfo + o, sizeof cpuinfo - o,
                        "\nprocessor\t: 1\nmodel name\t: Second CPU\nflags\t\t: avx512f");
  put(root, "proc/cpuinfo", cpuinfo, o);

  puts_file(root, "proc/meminfo",
            "MemTotal:       16384 kB\nMemFree: 1 kB\nMemAvailable: 99999999999999999999 kB\n");
  puts_file(root, "etc/os-release", "NAME=Fake\nPRETTY_NAME=\"Fake \xc3\xa9 Linux 1.0\"\n");
  puts_file(root, "proc/loadavg", "3.50 2.00 1.00 1/100 12345\n");
  puts_file(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n");
  puts_file(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "1200000\n");
  puts_file(root, "proc/driver/nvidia/version",
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.77  Release Build  "
            "(nixbld@)  Sun Feb  9 11:08:26 UTC 2025\nGCC version:  gcc version 13.3.0 (GCC)\n");
  puts_file(root, "proc/driver/nvidia/gpus/0000:02:00.0/information", "Model: \t\t NVIDIA B\n");
  puts_file(root, "proc/driver/nvidia/gpus/0000:01:00.0/information",
            "Model: \t\t NVIDIA H200\nIRQ:   \t\t 140\nBus Type: \t PCIe\n");

  nnp_env e;
  nnp_env_capture_root(&e, root);
  CHECK_MSG(!strcmp(e.cpu_model, "Fake? CPU @ 3.00GHz"), "cpu_model '%s'", e.cpu_model);
  CHECK_MSG(!strcmp(e.cpu_flags, "avx2 fma"), "cpu_flags '%s'", e.cpu_flags);
  CHECK(e.mem_total_bytes == 16384 * 1024LL);
  CHECK(e.mem_available_bytes == 0); /* overflowing value refused, not wrapped */
  CHECK_MSG(!strcmp(e.os, "Fake \xc3\xa9 Linux 1.0"), "os '%s'", e.os);
  CHECK(e.loadavg1 == 3.5);
  CHECK(!strcmp(e.governor, "powersave"));
  CHECK(e.cpu_mhz == 1200.0); /* scaling_cur_freq (kHz) wins over cpuinfo */
  CHECK_MSG(!strcmp(e.gpu, "NVIDIA H200 x2 (driver 565.77)"), "gpu '%s'", e.gpu);

  /* busy: load 3.5 against the allowed CPUs of this process */
  nnp_env b = e;
  b.cpus_allowed = 4;
  b.loadavg1 = 3.5;
  CHECK(nnp_env_is_busy(&b));
  b.loadavg1 = 1.9;
  CHECK(!nnp_env_is_busy(&b));
  b.cpus_allowed = 0;
  b.cpus_online = 2;
  b.loadavg1 = 1.5;
  CHECK(nnp_env_is_busy(&b));

  char out[512];
  json_check(&e, "d[\"os\"] == \"Fake \\u00e9 Linux 1.0\", d[\"gpu\"]", out, sizeof out);
  if (access(PY, X_OK) == 0)
    CHECK_MSG(!strcmp(out, "True NVIDIA H200 x2 (driver 565.77)"), "got '%s'", out);
  rm_tree(root);

  /* Empty files, garbage and no cpufreq: fields stay empty/zero, nothing breaks. */
  char root2[] = "/tmp/nnp_test_envroot_XXXXXX";
  CHECK(mkdtemp(root2) != NULL);
  puts_file(root2, "proc/cpuinfo", "");
  puts_file(root2, "proc/meminfo", "MemTotal: -5 kB\nMemAvailable: banana\n:\n::::\n");
  puts_file(root2, "etc/os-release", "PRETTY_NAME=\"\n");
  puts_file(root2, "proc/loadavg", "nan 1 2\n");
  puts_file(root2, "proc/driver/nvidia/version", "NVRM version: no version here .. 1.\n");
  nnp_env_capture_root(&e, root2);
  CHECK(e.cpu_model[0] == '\0' && e.cpu_flags[0] == '\0');
  CHECK(e.mem_total_bytes == 0 && e.mem_available_bytes == 0);
  CHECK_MSG(!strcmp(e.os, "\""), "os '%s'", e.os);
  CHECK(e.loadavg1 == 0.0); /* nan refused */
  CHECK(e.governor[0] == '\0' && e.cpu_mhz == 0.0);
  CHECK_MSG(e.gpu[0] == '\0', "gpu '%s'", e.gpu);
  CHECK(e.cpus_online >= 1); /* sysconf, not the fake tree */
  rm_tree(root2);

  /* A missing root: everything file-based empty. */
  nnp_env_capture_root(&e, "/nonexistent/nnp");
  CHECK(e.cpu_model[0] == '\0' && e.mem_total_bytes == 0 && e.gpu[0] == '\0');
}

static void test_json_of_garbage(void) {
  /* Struct filled by someone else with no terminators and invalid bytes: the JSON must
   * still be valid and bounded by the field sizes. */
  nnp_env e;
  memset(&e, 0xff, sizeof e);
  e.cpu_mhz = 1.0 / 0.0;
  e.loadavg1 = 0.5;
  static const char odd[] = "quote\" back\\ nl\n tab\t ctl\x01 ok";
  memcpy(e.os, odd, sizeof odd - 1); /* no terminator: 0xff bytes follow */
  char out[512];
  json_check(&e, "d[\"cpu_mhz\"], len(d[\"cpu_model\"]) <= 128, d[\"os\"][:6]", out, sizeof out);
  if (access(PY, X_OK) == 0) CHECK_MSG(!strcmp(out, "None True quote\""), "got '%s'", out);
}

int main(void) {
  test_this_machine();
  test_fake_root();
  test_json_of_garbage();
  TEST_MAIN_END();
}
