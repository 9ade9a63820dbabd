"""Footprint and energy for the Python worker, the same definitions as the C worker's
(src/bench/footprint.c; docs/worker-protocol.md): runtime bytes are the distinct regular
files mapped into this process plus the files of the imported modules; energy comes only
from a hardware counter (Linux powercap RAPL, or NVML for a CUDA row), never estimated."""
import ctypes
import os
import sys


def runtime_bytes(*exclude, exclude_dirs=()):
    """(bytes, files): distinct (device, inode) regular files mapped or imported, but the
    excluded ones (the model files: they are the model's bytes, not the runtime's) and
    those under exclude_dirs (a backend's cache folder: code compiled from the model)."""
    dirs = [os.path.realpath(d) + os.sep for d in exclude_dirs]
    seen = set()
    total = 0
    ex = set()
    for e in exclude:
        try:
            st = os.stat(e) if e else None
        except OSError:
            st = None
        if st:
            ex.add((st.st_dev, st.st_ino))
    paths = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                i = line.find("/")
                if i < 0:
                    continue
                p = line[i:].rstrip("\n")
                if p.endswith(" (deleted)") or p.startswith("/dev/") or p.startswith("/memfd:"):
                    continue
                paths.append(p)
    except OSError:
        return -1, -1
    for m in list(sys.modules.values()):
        p = getattr(m, "__file__", None)
        if isinstance(p, str):
            paths.append(p)
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        if dirs and any(os.path.realpath(p).startswith(d) for d in dirs):
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen or not os.path.isfile(p) or key in ex:
            continue
        seen.add(key)
        total += st.st_size
    return total, len(seen)


def file_bytes(path):
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


class Rapl:
    """Top-level package domains of /sys/class/powercap (their counters hold the subdomains)."""

    def __init__(self, root="/sys/class/powercap"):
        self.domains = []  # (energy_uj path, wrap range, start)
        self.source = ""
        if not os.path.isdir(root):
            self.source = f"not available here (no {root})"
            return
        names = []
        for d in sorted(os.listdir(root)):
            if not d.startswith("intel-rapl:") or ":" in d[len("intel-rapl:"):]:
                continue
            base = os.path.join(root, d)
            try:
                start = int(open(os.path.join(base, "energy_uj")).read())
            except (OSError, ValueError):
                continue
            try:
                rng = int(open(os.path.join(base, "max_energy_range_uj")).read())
            except (OSError, ValueError):
                rng = 0
            try:
                names.append(open(os.path.join(base, "name")).read().strip())
            except OSError:
                names.append("package")
            self.domains.append((os.path.join(base, "energy_uj"), rng, start))
        self.source = ("rapl: " + ",".join(names)) if self.domains else \
            f"not available here (no readable RAPL counter under {root})"

    def joules(self):
        if not self.domains:
            return -1.0
        uj = 0
        for path, rng, start in self.domains:
            try:
                now = int(open(path).read())
            except (OSError, ValueError):
                return -1.0
            d = now - start
            uj += d + rng if d < 0 else d
        return uj * 1e-6


class Nvml:
    """The few NVML calls nnperf needs, through ctypes (no pynvml on the GPU machines):
    device name, driver, clocks, total energy (mJ), this process's device memory."""

    def __init__(self, index):
        self.lib = None
        self.handle = ctypes.c_void_p()
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            if lib.nvmlInit_v2() != 0 or lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(self.handle)) != 0:
                return
            self.lib = lib
        except OSError:
            pass

    def info(self):
        if not self.lib:
            return ""
        name, drv = ctypes.create_string_buffer(96), ctypes.create_string_buffer(96)
        self.lib.nvmlDeviceGetName(self.handle, name, 96)
        self.lib.nvmlSystemGetDriverVersion(drv, 96)
        clocks = []
        for label, kind in (("sm", 1), ("mem", 2)):
            cur, mx = ctypes.c_uint(), ctypes.c_uint()
            if self.lib.nvmlDeviceGetClockInfo(self.handle, kind, ctypes.byref(cur)) == 0 and \
                    self.lib.nvmlDeviceGetMaxClockInfo(self.handle, kind, ctypes.byref(mx)) == 0:
                clocks.append(f"{label} {cur.value}/{mx.value} MHz")
        return f"{name.value.decode()} (driver {drv.value.decode()}; clocks now/max {', '.join(clocks)})"

    def energy_mj(self):
        if not self.lib:
            return None
        e = ctypes.c_ulonglong()
        return e.value if self.lib.nvmlDeviceGetTotalEnergyConsumption(self.handle, ctypes.byref(e)) == 0 else None

    def process_bytes(self):
        if not self.lib:
            return -1

        class Proc(ctypes.Structure):
            _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong),
                        ("gi", ctypes.c_uint), ("ci", ctypes.c_uint)]
        n = ctypes.c_uint(64)
        procs = (Proc * 64)()
        if self.lib.nvmlDeviceGetComputeRunningProcesses_v3(self.handle, ctypes.byref(n), procs) != 0:
            return -1
        for p in procs[:n.value]:
            if p.pid == os.getpid():
                return p.used
        return -1


class NvmlEnergy:
    def __init__(self, nvml, index):
        self.nvml = nvml
        self.start = nvml.energy_mj()
        self.source = f"nvml: GPU {index}" if self.start is not None else \
            "not available here (NVML total energy not readable)"

    def joules(self):
        now = self.nvml.energy_mj() if self.start is not None else None
        return -1.0 if now is None else (now - self.start) * 1e-3
