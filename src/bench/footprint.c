#include "bench/footprint.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nnperf/alloc.h"

int64_t nnp_file_bytes(const char *path) {
  struct stat st;
  return path && stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (int64_t)st.st_size : -1;
}

typedef struct file_id {
  dev_t dev;
  ino_t ino;
} file_id;

/* Adds path's size once per (device, inode): a library is mapped in several segments. */
static int add_file(const char *path, file_id **seen, int *n, int *cap, int64_t *bytes) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 1;
  for (int i = 0; i < *n; i++)
    if ((*seen)[i].dev == st.st_dev && (*seen)[i].ino == st.st_ino) return 1;
  if (*n == *cap) {
    int ncap = *cap ? *cap * 2 : 256;
    file_id *ns = nnp_realloc(*seen, sizeof **seen * (size_t)ncap);
    if (!ns) return 0;
    *seen = ns;
    *cap = ncap;
  }
  (*seen)[(*n)++] = (file_id){st.st_dev, st.st_ino};
  *bytes += (int64_t)st.st_size;
  return 1;
}

/* Whether path lies under dir (both absolute, dir without a trailing '/'). */
static int under_dir(const char *path, const char *dir) {
  size_t dl = strlen(dir);
  return dl && !strncmp(path, dir, dl) && path[dl] == '/';
}

nnp_status nnp_footprint_runtime(const char *exclude, const char *exclude_dir, int64_t *bytes, int *files) {
  return nnp_footprint_runtime_pid(0, exclude, exclude_dir, bytes, files);
}

nnp_status nnp_footprint_runtime_pid(int pid, const char *exclude, const char *exclude_dir, int64_t *bytes,
                                     int *files) {
  *bytes = 0;
  *files = 0;
  char maps[64];
  if (pid > 0) snprintf(maps, sizeof maps, "/proc/%d/maps", pid);
  else snprintf(maps, sizeof maps, "/proc/self/maps");
  FILE *f = fopen(maps, "r");
  if (!f) return nnp_error(NNP_ERR_IO, "footprint: cannot read %s", maps);
  struct stat ex;
  int have_ex = exclude && stat(exclude, &ex) == 0;
  char ex_dir[PATH_MAX] = ""; /* resolved: /proc/self/maps names files by their real path */
  if (exclude_dir && !realpath(exclude_dir, ex_dir)) ex_dir[0] = 0;
  file_id *seen = NULL;
  int n = 0, cap = 0, ok = 1;
  char line[4608];
  while (ok && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    char *path = strchr(line, '/'); /* the pathname column: the first '/' of the line */
    if (!path || strstr(path, " (deleted)") || !strncmp(path, "/dev/", 5) || !strncmp(path, "/memfd:", 7) ||
        under_dir(path, ex_dir))
      continue;
    struct stat st;
    if (have_ex && stat(path, &st) == 0 && st.st_dev == ex.st_dev && st.st_ino == ex.st_ino) continue;
    ok = add_file(path, &seen, &n, &cap, bytes);
  }
  fclose(f);
  nnp_free(seen);
  *files = n;
  return ok ? NNP_OK : nnp_error(NNP_ERR_NOMEM, "footprint: out of memory");
}

static int read_double(const char *path, double *v) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int ok = fscanf(f, "%lf", v) == 1;
  fclose(f);
  return ok;
}

/* Top-level package domains only ("intel-rapl:N"): their counters already hold the
 * subdomains (core, uncore, dram on some parts), which would count twice. */
void nnp_energy_start(nnp_energy *e, const char *root) {
  memset(e, 0, sizeof *e);
  DIR *d = opendir(root);
  if (!d) {
    snprintf(e->source, sizeof e->source, "not available here (no %s)", root);
    return;
  }
  struct dirent *de;
  size_t used = (size_t)snprintf(e->source, sizeof e->source, "rapl:");
  while ((de = readdir(d)) != NULL && e->n < NNP_ENERGY_MAX_DOMAINS) {
    if (strncmp(de->d_name, "intel-rapl:", 11) || strchr(de->d_name + 11, ':')) continue;
    char base[512], name[64] = "package", p[640];
    snprintf(base, sizeof base, "%s/%s", root, de->d_name);
    snprintf(p, sizeof p, "%s/energy_uj", base);
    double start, range = 0;
    if (!read_double(p, &start)) continue; /* unreadable (root-only on recent kernels) */
    snprintf(e->path[e->n], sizeof e->path[0], "%s", p);
    snprintf(p, sizeof p, "%s/max_energy_range_uj", base);
    read_double(p, &range);
    snprintf(p, sizeof p, "%s/name", base);
    FILE *nf = fopen(p, "r");
    if (nf) {
      if (fscanf(nf, "%63s", name) != 1) snprintf(name, sizeof name, "package");
      fclose(nf);
    }
    e->range_uj[e->n] = range;
    e->start_uj[e->n++] = start;
    if (used < sizeof e->source)
      used += (size_t)snprintf(e->source + used, sizeof e->source - used, "%s%s", e->n > 1 ? "," : " ", name);
  }
  closedir(d);
  if (!e->n) snprintf(e->source, sizeof e->source, "not available here (no readable RAPL counter under %s)", root);
}

double nnp_energy_joules(const nnp_energy *e) {
  if (!e->n) return -1;
  double uj = 0;
  for (int i = 0; i < e->n; i++) {
    double now;
    if (!read_double(e->path[i], &now)) return -1;
    double d = now - e->start_uj[i];
    if (d < 0) d += e->range_uj[i]; /* the counter wrapped once */
    uj += d;
  }
  return uj * 1e-6;
}
