"""Linear least squares on data too large to copy: a Householder QR accumulated by row chunks.

:func:`numpy.linalg.lstsq` copies ``A`` and ``y`` (the data's memory twice); :func:`blocked_lstsq`
holds only ``R`` and one chunk: ``R = qr([R; chunk])`` over the chunks of ``[A | Y]``.
"""

from __future__ import annotations

import numpy as np

from optcmp._scipy import linalg

#: Bytes of ``A`` plus ``y`` (the copy ``lstsq`` makes) above which the solve is by row chunks.
LSTSQ_COPY_MAX_BYTES = 2**26

#: Bytes of one chunk of rows of ``[A | y]`` (at least as many rows as columns).
CHUNK_BYTES = 2**22

#: Rows per column of ``[A | y]`` the chunked solve needs (``R``: an eighth of the copy saved).
MIN_ROWS_PER_COLUMN = 8


def use_blocked(A: np.ndarray, y: np.ndarray) -> bool:
    """Whether :func:`blocked_lstsq` should replace :func:`numpy.linalg.lstsq` for ``A``, ``y``."""
    q = A.shape[1] + (1 if y.ndim == 1 else y.shape[1])
    return (A.nbytes + y.nbytes > LSTSQ_COPY_MAX_BYTES
            and A.shape[0] >= MIN_ROWS_PER_COLUMN * q)


def chunk_rows(q: int) -> int:
    """Rows per chunk of a matrix of ``q`` float64 columns (:data:`CHUNK_BYTES`, at least ``q``)."""
    return max(CHUNK_BYTES // (8 * q), q, 1)


def _triangular_factor(A: np.ndarray, Y: np.ndarray, rows: int) -> np.ndarray:
    """``R`` of the QR factorization of ``[A | Y]``: ``dgeqrf`` of ``[R; chunk]`` per chunk."""
    n, p = A.shape
    q = p + Y.shape[1]
    lapack = linalg().lapack
    R = np.zeros((q, q))
    buf, lwork = np.empty((0, q), order="F"), q
    for start in range(0, n, rows):
        m = min(rows, n - start)
        if buf.shape[0] != q + m:  # the first chunk, and a shorter last one
            buf = np.empty((q + m, q), order="F")
            lwork = max(int(lapack.dgeqrf_lwork(q + m, q)[0]), q)
        buf[:q] = R
        buf[q:, :p] = A[start:start + m]
        buf[q:, p:] = Y[start:start + m]
        qr, _, _, info = lapack.dgeqrf(buf, lwork=lwork, overwrite_a=1)
        if info != 0:
            raise RuntimeError(f"LAPACK dgeqrf failed (info={info}) on rows {start:,} to "
                               f"{start + m:,} of the least-squares data")
        R = np.triu(qr[:q])
    return R


def _full_rank(R11: np.ndarray, n: int) -> bool:
    """``lstsq``'s default rank test (``s_min > eps * max(n, p) * s_max``) on ``R11`` with
    columns scaled to unit norm: a column's units do not make it negligible."""
    p = R11.shape[1]
    norms = np.linalg.norm(R11, axis=0)
    if not np.all(norms > 0):
        return False
    s = np.linalg.svd(R11 / norms, compute_uv=False)
    return bool(s[-1] > np.finfo(np.float64).eps * max(n, p) * s[0])


def blocked_lstsq(A: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, str]:
    """Least-squares solution of ``A W = y`` from a Householder QR accumulated by row chunks."""
    n, p = A.shape
    Y = y.reshape(n, -1)
    rows = chunk_rows(p + Y.shape[1])
    R = _triangular_factor(A, Y, rows)
    R11, R12 = R[:p, :p], R[:p, p:]
    method = f"blocked Householder QR (chunks of {rows:,} rows)"
    if _full_rank(R11, n):
        W = linalg().solve_triangular(R11, R12, check_finite=False)
    else:
        rcond = np.finfo(np.float64).eps * max(n, p)
        W, _, rank, _ = np.linalg.lstsq(R11, R12, rcond=rcond)
        method += f", rank {int(rank)} of {p}: minimum-norm solution"
    return (W[:, 0] if y.ndim == 1 else W), method


def mean_squared_residual(A: np.ndarray, W: np.ndarray, y: np.ndarray) -> float:
    """``||A W - y||^2 / (n k)``, by row chunks (no temporary of the size of ``y``)."""
    rows = chunk_rows(max(A.shape[1], 1 if y.ndim == 1 else y.shape[1]))
    total = 0.0
    for start in range(0, A.shape[0], rows):
        r = np.ascontiguousarray(A[start:start + rows]) @ W  # row by row, whatever A's order
        r -= y[start:start + rows]
        total += float(np.vdot(r, r))
    return total / y.size
