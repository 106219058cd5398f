"""The machine a comparison ran on: Python, platform, CPU, GPUs, threads and library versions
(torch and TensorFlow only when a run imported them)."""

from __future__ import annotations

import contextlib
import os
import platform
import sys
from typing import Any

import numpy as np

from optcmp._version import __version__


def environment() -> dict[str, Any]:
    """Python, platform, CPU and library versions (frameworks only if already imported).

    Returns
    -------
    dict
    """
    installed = _installed_versions()
    env: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "numpy": np.__version__,
        "scipy": installed.get("scipy", "not installed"),
    }
    for mod in ("torch", "tensorflow"):
        m = sys.modules.get(mod)
        if m is not None:
            env[mod] = getattr(m, "__version__", "?")
    env["installed"] = installed
    env["threads"] = _thread_settings()
    with contextlib.suppress(Exception):  # CUDA names only where torch initialized it already
        cuda = sys.modules["torch"].cuda
        if cuda.is_initialized() and cuda.device_count():
            env["gpus"] = [cuda.get_device_name(i) for i in range(cuda.device_count())]
    from optcmp.timing import Stopwatch
    env["timer_resolution"] = Stopwatch().timer_resolution()
    with contextlib.suppress(ImportError):
        from threadpoolctl import threadpool_info
        env["blas_threads"] = [{"api": i.get("internal_api"), "threads": i.get("num_threads")}
                               for i in threadpool_info()]
    env["optcmp"] = __version__
    return env


def _installed_versions() -> dict[str, str]:
    """Versions of the frameworks installed (read from package metadata; nothing imported)."""
    from importlib import metadata
    out: dict[str, str] = {}
    for dist in ("numpy", "scipy", "torch", "tensorflow", "tensorflow-cpu", "keras", "jax",
                 "jaxlib", "optax", "pandas", "matplotlib"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[dist] = metadata.version(dist)
    return out


def _thread_settings() -> dict[str, Any]:
    """Thread-count environment variables and the frameworks' thread settings (if imported)."""
    out: dict[str, Any] = {k: os.environ[k] for k in (
        "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TF_NUM_INTRAOP_THREADS",
        "TF_NUM_INTEROP_THREADS") if k in os.environ}
    with contextlib.suppress(Exception):  # informative only; a KeyError: torch not imported
        torch = sys.modules["torch"]
        out["torch_intraop"] = int(torch.get_num_threads())
        out["torch_interop"] = int(torch.get_num_interop_threads())
    with contextlib.suppress(Exception):
        threading = sys.modules["tensorflow"].config.threading
        out["tf_intraop"] = int(threading.get_intra_op_parallelism_threads())
        out["tf_interop"] = int(threading.get_inter_op_parallelism_threads())
    return out


def _cpu_model() -> str:
    """The CPU's model name."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def blas_kernel() -> str:
    """The OpenBLAS kernel in use (threadpoolctl's ``architecture``), or the BLAS library name."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown"
    for info in threadpool_info():
        if info.get("internal_api") in ("openblas", "mkl", "blis"):
            arch = info.get("architecture")
            return str(arch) if arch else str(info.get("internal_api"))
    return "unknown"


def machine_stamp(threads: int | None = None) -> dict[str, Any]:
    """What a measured figure belongs to: CPU model, cores, BLAS kernel, versions, threads, load."""
    import datetime as _dt
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return {"cpu": _cpu_model(), "cores": os.cpu_count(), "machine": platform.machine(),
            "blas_kernel": blas_kernel(), "python": sys.version.split()[0],
            "versions": _installed_versions(), "threads": threads,
            "load": round(load, 2), "date": _dt.date.today().isoformat()}


def stamp_text(stamp: dict[str, Any]) -> str:
    """One line for a reader: ``"Intel Xeon ... (2 cores, ...), numpy 2.3.1, ..., load 0.4"``."""
    v = stamp.get("versions", {})
    libs = ", ".join(f"{k} {v[k]}" for k in ("numpy", "scipy", "torch", "tensorflow-cpu", "jax")
                     if k in v)
    thr = stamp.get("threads")
    thr_s = f", {thr} thread{'s' if thr != 1 else ''} per framework" if thr else ""
    return (f"{stamp.get('cpu', '?')} ({stamp.get('cores', '?')} cores, BLAS kernel "
            f"{stamp.get('blas_kernel', '?')}), {libs}{thr_s}, load {stamp.get('load', '?')}, "
            f"{stamp.get('date', '?')}")
