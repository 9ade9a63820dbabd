/* Environment capture: what machine, OS, compiler and load a result was measured on.
 *
 * Everything here reads files that may be missing, truncated, huge or full of bytes we
 * do not expect (containers fake /proc, VMs omit cpufreq). Every read is bounded, every
 * string is copied with its length checked and cleaned to printable UTF-8, and a field
 * that cannot be read is left empty or zero: capture never fails. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_ALLOC */

#include "nnperf/env.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "util/json_write.h"

#define LINE_MAX_BYTES 8192    /* longer than any real cpuinfo "flags" line (~1.9 KB) */
#define CPUINFO_MAX_LINES 4000 /* we only need the first processor's block */

/* --- string helpers ----------------------------------------------------------------- */

/* Copies src[0..n) into dst[cap]: leading/trailing whitespace trimmed, control bytes
 * turned into spaces, invalid UTF-8 into '?', cut at a character boundary to fit. */
static void clean_copy(char *dst, size_t cap, const char *src, size_t n) {
  if (cap == 0) return;
  const unsigned char *s = (const unsigned char *)src;
  while (n > 0 && (s[0] == ' ' || s[0] == '\t')) { s++; n--; }
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' ||
                   s[n - 1] == '\r'))
    n--;
  size_t o = 0, i = 0;
  while (i < n) {
    size_t len = nnp_utf8_seq_len(s + i, n - i);
    if (len == 0) {
      if (o + 1 >= cap) break;
      dst[o++] = '?';
      i++;
      continue;
    }
    if (o + len >= cap) break;
    if (len == 1 && (s[i] < 0x20 || s[i] == 0x7f)) dst[o++] = ' ';
    else {
      memcpy(dst + o, s + i, len);
      o += len;
    }
    i += len;
  }
  dst[o] = '\0';
}

static void clean_str(char *dst, size_t cap, const char *src) {
  clean_copy(dst, cap, src, strlen(src));
}

/* Reads one line into buf (NUL-terminated, newline removed). A line longer than the
 * buffer is cut and the rest discarded; *cut says so. Returns 0 at end of file. */
static int read_line(FILE *f, char *buf, size_t cap, int *cut) {
  *cut = 0;
  if (!fgets(buf, (int)cap, f)) return 0;
  size_t len = strlen(buf);
  if (len > 0 && buf[len - 1] == '\n') buf[len - 1] = '\0';
  else if (len + 1 == cap) {
    int c;
    *cut = 1;
    while ((c = fgetc(f)) != EOF && c != '\n') {
    }
  }
  return 1;
}

/* Splits "key<ws>: value" in place. Returns 0 when the line has no colon. */
static int split_kv(char *line, char **key, char **val) {
  char *colon = strchr(line, ':');
  if (!colon) return 0;
  *colon = '\0';
  char *end = colon;
  while (end > line && (end[-1] == ' ' || end[-1] == '\t')) end--;
  *end = '\0';
  char *v = colon + 1;
  while (*v == ' ' || *v == '\t') v++;
  *key = line;
  *val = v;
  return 1;
}

/* First line of a small file, cleaned, into dst; "" when unreadable. */
static void read_first_line(const char *path, char *dst, size_t cap) {
  char line[512];
  int cut;
  dst[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return;
  if (read_line(f, line, sizeof line, &cut)) clean_str(dst, cap, line);
  fclose(f);
}

static void join_path(char *dst, size_t cap, const char *root, const char *rel) {
  int n = snprintf(dst, cap, "%s%s", root, rel);
  if (n < 0 || (size_t)n >= cap) dst[0] = '\0'; /* too long: fopen("") fails cleanly */
}

/* --- /proc/cpuinfo ------------------------------------------------------------------- */

/* The SIMD features that decide which kernels a backend can use. x86 names first,
 * then arm64 ("Features" line). */
static const char *const SIMD_FLAGS[] = {
    "sse4_1",   "sse4_2",      "avx",        "avx2",        "fma",       "f16c",
    "avx512f",  "avx512bw",    "avx512vl",   "avx512_vnni", "avx512_bf16", "avx512_fp16",
    "avx_vnni", "amx_tile",    "amx_int8",   "amx_bf16",    "asimd",     "asimdhp",
    "asimddp",  "sve",         "sve2",       "i8mm",        "bf16"};

/* Appends the SIMD-relevant tokens of a flags line to e->cpu_flags. When the line was
 * cut, its last token may be incomplete ("avx512f" of "avx512fp16"), so it is dropped. */
static void take_flags(nnp_env *e, char *val, int cut) {
  size_t nflags = sizeof SIMD_FLAGS / sizeof SIMD_FLAGS[0];
  size_t o = strlen(e->cpu_flags);
  char *p = val;
  while (*p) {
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) break;
    char *start = p;
    while (*p && *p != ' ' && *p != '\t') p++;
    size_t len = (size_t)(p - start);
    if (cut && !*p) break;
    for (size_t k = 0; k < nflags; k++) {
      if (strlen(SIMD_FLAGS[k]) != len || memcmp(SIMD_FLAGS[k], start, len) != 0) continue;
      if (o + len + 2 > sizeof e->cpu_flags) return;
      if (o > 0) e->cpu_flags[o++] = ' ';
      memcpy(e->cpu_flags + o, start, len);
      o += len;
      e->cpu_flags[o] = '\0';
      break;
    }
  }
}

static void read_cpuinfo(nnp_env *e, const char *root) {
  char path[4096];
  join_path(path, sizeof path, root, "/proc/cpuinfo");
  FILE *f = fopen(path, "r");
  if (!f) return;
  char *line = malloc(LINE_MAX_BYTES); /* plain malloc: not worth an injected failure */
  if (!line) {
    fclose(f);
    return;
  }
  int cut, processors = 0, have_flags = 0;
  double mhz = 0.0;
  char implementer[16] = "", part[16] = ""; /* arm64 has no model name line */
  for (int lines = 0; lines < CPUINFO_MAX_LINES && read_line(f, line, LINE_MAX_BYTES, &cut);
       lines++) {
    char *key, *val;
    if (!split_kv(line, &key, &val)) continue;
    if (!strcmp(key, "processor")) {
      /* Only the first block matters (all cores alike, or the boot core is typical).
       * arm64 prints a "processor" line per core and the model afterwards, so keep
       * reading until a model has been found. */
      if (++processors > 1 && (e->cpu_model[0] || implementer[0]) && have_flags) break;
      continue;
    }
    /* x86 "model name"; arm64 / older kernels "Processor", "Hardware"; POWER "cpu". */
    if (!e->cpu_model[0] && (!strcmp(key, "model name") || !strcmp(key, "Processor") ||
                             !strcmp(key, "cpu") || !strcmp(key, "Hardware")))
      clean_str(e->cpu_model, sizeof e->cpu_model, val);
    else if (!have_flags && (!strcmp(key, "flags") || !strcmp(key, "Features"))) {
      take_flags(e, val, cut);
      have_flags = 1;
    } else if (mhz == 0.0 && !strcmp(key, "cpu MHz")) {
      char *endp;
      double v = strtod(val, &endp);
      if (endp != val && v > 0.0 && v < 1e6) mhz = v;
    } else if (!implementer[0] && !strcmp(key, "CPU implementer"))
      clean_str(implementer, sizeof implementer, val);
    else if (!part[0] && !strcmp(key, "CPU part"))
      clean_str(part, sizeof part, val);
  }
  free(line);
  fclose(f);
  if (e->cpu_mhz == 0.0) e->cpu_mhz = mhz;
  if (!e->cpu_model[0] && implementer[0])
    snprintf(e->cpu_model, sizeof e->cpu_model, "arm implementer %s part %s", implementer,
             part[0] ? part : "?");
}

/* --- other files ----------------------------------------------------------------------- */

static void read_meminfo(nnp_env *e, const char *root) {
  char path[4096], line[512];
  int cut;
  join_path(path, sizeof path, root, "/proc/meminfo");
  FILE *f = fopen(path, "r");
  if (!f) return;
  for (int lines = 0; lines < 200 && read_line(f, line, sizeof line, &cut); lines++) {
    char *key, *val, *endp;
    if (!split_kv(line, &key, &val)) continue;
    int64_t *dst = !strcmp(key, "MemTotal")       ? &e->mem_total_bytes
                   : !strcmp(key, "MemAvailable") ? &e->mem_available_bytes
                                                  : NULL;
    if (!dst) continue;
    errno = 0;
    long long kib = strtoll(val, &endp, 10);
    /* values are in kB; refuse anything that would overflow int64 bytes */
    if (endp != val && errno == 0 && kib > 0 && kib < (INT64_MAX / 1024)) *dst = kib * 1024;
  }
  fclose(f);
}

static void read_os_release(nnp_env *e, const char *root) {
  static const char *const CANDIDATES[] = {"/etc/os-release", "/usr/lib/os-release"};
  char path[4096], line[512];
  int cut;
  for (size_t c = 0; c < 2 && !e->os[0]; c++) {
    join_path(path, sizeof path, root, CANDIDATES[c]);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    for (int lines = 0; lines < 200 && read_line(f, line, sizeof line, &cut); lines++) {
      if (strncmp(line, "PRETTY_NAME=", 12) != 0) continue;
      char *v = line + 12;
      size_t len = strlen(v);
      /* shell-style value: strip one pair of matching quotes */
      if (len >= 2 && (v[0] == '"' || v[0] == '\'') && v[len - 1] == v[0]) {
        v++;
        len -= 2;
      }
      clean_copy(e->os, sizeof e->os, v, len);
      break;
    }
    fclose(f);
  }
}

static void read_cpufreq(nnp_env *e, const char *root) {
  char path[4096], buf[64];
  join_path(path, sizeof path, root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  read_first_line(path, e->governor, sizeof e->governor);
  join_path(path, sizeof path, root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq");
  read_first_line(path, buf, sizeof buf);
  char *endp;
  double khz = strtod(buf, &endp);
  if (endp != buf && khz > 0.0 && khz < 1e9) e->cpu_mhz = khz / 1000.0;
}

static void read_loadavg(nnp_env *e, const char *root) {
  char path[4096], buf[128];
  join_path(path, sizeof path, root, "/proc/loadavg");
  read_first_line(path, buf, sizeof buf);
  char *endp;
  double v = strtod(buf, &endp);
  if (endp != buf && v >= 0.0 && v < 1e6) e->loadavg1 = v;
}

/* True when s[0..n) is a dotted version: digits, then one or more ".digits". */
static int is_version(const char *s, size_t n) {
  int dots = 0;
  size_t run = 0; /* digits since the last dot */
  for (size_t i = 0; i < n; i++) {
    if (s[i] >= '0' && s[i] <= '9') run++;
    else if (s[i] == '.' && run > 0) {
      dots++;
      run = 0;
    } else
      return 0;
  }
  return dots > 0 && run > 0;
}

/* Driver version: the first dotted-version token, e.g. in
 * "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 ..." or
 * "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.77  Release Build ...". */
static void nvidia_driver_version(const char *line, char *dst, size_t cap) {
  dst[0] = '\0';
  const char *p = line;
  while (*p) {
    while (*p == ' ' || *p == '\t') p++;
    const char *start = p;
    while (*p && *p != ' ' && *p != '\t') p++;
    if (is_version(start, (size_t)(p - start))) {
      clean_copy(dst, cap, start, (size_t)(p - start));
      return;
    }
  }
}

/* "NVIDIA H200 x8 (driver 550.54.14)" from /proc/driver/nvidia; "" without the driver. */
static void read_gpu(nnp_env *e, const char *root) {
  char path[4096], line[512], version[32] = "", model[64] = "";
  int cut;
  join_path(path, sizeof path, root, "/proc/driver/nvidia/version");
  FILE *f = fopen(path, "r");
  if (f) {
    if (read_line(f, line, sizeof line, &cut)) nvidia_driver_version(line, version, sizeof version);
    fclose(f);
  }

  /* GPU directories are named by PCI address; the smallest one is "the first GPU"
   * whatever order readdir returns them in. */
  int n_gpus = 0;
  char first[256] = "";
  join_path(path, sizeof path, root, "/proc/driver/nvidia/gpus");
  DIR *d = opendir(path);
  if (d) {
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n_gpus < 4096) {
      if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof first) continue;
      if (n_gpus == 0 || strcmp(de->d_name, first) < 0) strcpy(first, de->d_name);
      n_gpus++;
    }
    closedir(d);
  }
  if (n_gpus > 0) {
    char rel[512];
    snprintf(rel, sizeof rel, "/proc/driver/nvidia/gpus/%s/information", first);
    join_path(path, sizeof path, root, rel);
    f = fopen(path, "r");
    if (f) {
      for (int lines = 0; lines < 100 && read_line(f, line, sizeof line, &cut); lines++) {
        char *key, *val;
        if (split_kv(line, &key, &val) && !strcmp(key, "Model")) {
          clean_str(model, sizeof model, val);
          break;
        }
      }
      fclose(f);
    }
  }

  if (!model[0] && !version[0]) return;
  char count[16] = "";
  if (n_gpus > 1) snprintf(count, sizeof count, " x%d", n_gpus);
  if (model[0] && version[0])
    snprintf(e->gpu, sizeof e->gpu, "%s%s (driver %s)", model, count, version);
  else if (model[0])
    snprintf(e->gpu, sizeof e->gpu, "%s%s", model, count);
  else
    snprintf(e->gpu, sizeof e->gpu, "NVIDIA GPU (driver %s)", version);
}

/* --- system calls ---------------------------------------------------------------------- */

static int count_allowed_cpus(void) {
  /* A fixed cpu_set_t holds 1024 CPUs; bigger machines need a larger mask. */
  for (int ncpu = 1024; ncpu <= (1 << 20); ncpu *= 4) {
    cpu_set_t *set = CPU_ALLOC(ncpu);
    if (!set) return 0;
    size_t size = CPU_ALLOC_SIZE(ncpu);
    CPU_ZERO_S(size, set);
    if (sched_getaffinity(0, size, set) == 0) {
      int n = CPU_COUNT_S(size, set);
      CPU_FREE(set);
      return n;
    }
    CPU_FREE(set);
    if (errno != EINVAL) return 0;
  }
  return 0;
}

static void fill_build_info(nnp_env *e) {
#if defined(__clang__)
  snprintf(e->compiler, sizeof e->compiler, "clang %s", __VERSION__);
#elif defined(__GNUC__)
  snprintf(e->compiler, sizeof e->compiler, "gcc %s", __VERSION__);
#elif defined(__VERSION__)
  snprintf(e->compiler, sizeof e->compiler, "%s", __VERSION__);
#endif

  const char *parts[3];
  int n = 0;
#ifdef NNP_BUILD_FLAGS
  parts[n++] = NNP_BUILD_FLAGS;
#endif
#if defined(__SANITIZE_ADDRESS__)
  parts[n++] = "asan";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  parts[n++] = "asan";
#endif
#endif
#ifndef __OPTIMIZE__
  /* An unoptimised nnperf makes the native backend's numbers meaningless: say so. */
  parts[n++] = "unoptimized";
#endif
  size_t o = 0;
  e->build_flags[0] = '\0';
  for (int i = 0; i < n; i++) {
    int w = snprintf(e->build_flags + o, sizeof e->build_flags - o, "%s%s", o ? " " : "",
                     parts[i]);
    if (w < 0 || (size_t)w >= sizeof e->build_flags - o) break;
    o += (size_t)w;
  }
}

/* Capture with every file path prefixed by root ("" for the real system). Not in the
 * public header: it exists so that tests can point capture at fabricated /proc trees. */
void nnp_env_capture_root(nnp_env *e, const char *root);

void nnp_env_capture_root(nnp_env *e, const char *root) {
  memset(e, 0, sizeof *e);
  if (!root) root = "";

  long online = sysconf(_SC_NPROCESSORS_ONLN);
  e->cpus_online = online > 0 && online < (1L << 30) ? (int)online : 0;
  e->cpus_allowed = count_allowed_cpus();

  struct utsname u;
  if (uname(&u) == 0) {
    char buf[2 * sizeof u.release + 2];
    snprintf(buf, sizeof buf, "%s %s", u.sysname, u.release);
    clean_str(e->kernel, sizeof e->kernel, buf);
    clean_str(e->hostname, sizeof e->hostname, u.nodename);
  }

  /* cpufreq before cpuinfo: scaling_cur_freq is preferred, cpuinfo "cpu MHz" is the
   * fallback and only fills cpu_mhz when it is still 0. */
  read_cpufreq(e, root);
  read_cpuinfo(e, root);
  read_meminfo(e, root);
  read_os_release(e, root);
  read_loadavg(e, root);
  read_gpu(e, root);
  fill_build_info(e);

  time_t now = time(NULL);
  struct tm tm;
  if (now != (time_t)-1 && gmtime_r(&now, &tm))
    strftime(e->timestamp, sizeof e->timestamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void nnp_env_capture(nnp_env *e) { nnp_env_capture_root(e, ""); }

int nnp_env_is_busy(const nnp_env *e) {
  int cpus = e->cpus_allowed > 0 ? e->cpus_allowed : e->cpus_online;
  if (cpus <= 0) cpus = 1;
  return e->loadavg1 > cpus / 2.0;
}

/* The struct may have been filled by someone other than nnp_env_capture (a worker, a
 * test), so strings are cleaned again: the JSON must stay valid UTF-8 whatever they hold. */
static void json_field_str(FILE *f, const char *key, const char *val, size_t cap, int last) {
  char clean[512];
  size_t n = strnlen(val, cap); /* fields are fixed arrays: never read past one */
  clean_copy(clean, sizeof clean, val, n);
  fprintf(f, "\"%s\": ", key);
  nnp_json_string(f, clean);
  fputs(last ? "" : ", ", f);
}

void nnp_env_write_json(FILE *f, const nnp_env *e) {
  fputc('{', f);
  json_field_str(f, "cpu_model", e->cpu_model, sizeof e->cpu_model, 0);
  json_field_str(f, "cpu_flags", e->cpu_flags, sizeof e->cpu_flags, 0);
  fprintf(f, "\"cpus_online\": %d, \"cpus_allowed\": %d, ", e->cpus_online, e->cpus_allowed);
  /* integers printed exactly: %.9g would round 137438953472 */
  fprintf(f, "\"mem_total_bytes\": %lld, \"mem_available_bytes\": %lld, ",
          (long long)e->mem_total_bytes, (long long)e->mem_available_bytes);
  json_field_str(f, "os", e->os, sizeof e->os, 0);
  json_field_str(f, "kernel", e->kernel, sizeof e->kernel, 0);
  json_field_str(f, "hostname", e->hostname, sizeof e->hostname, 0);
  json_field_str(f, "compiler", e->compiler, sizeof e->compiler, 0);
  json_field_str(f, "build_flags", e->build_flags, sizeof e->build_flags, 0);
  json_field_str(f, "governor", e->governor, sizeof e->governor, 0);
  fputs("\"cpu_mhz\": ", f);
  nnp_json_number(f, e->cpu_mhz);
  fputs(", \"loadavg1\": ", f);
  nnp_json_number(f, e->loadavg1);
  fprintf(f, ", \"busy\": %s, ", nnp_env_is_busy(e) ? "true" : "false");
  json_field_str(f, "gpu", e->gpu, sizeof e->gpu, 0);
  json_field_str(f, "timestamp", e->timestamp, sizeof e->timestamp, 1);
  fputc('}', f);
}
