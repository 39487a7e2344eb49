"""The conformance corpus's comparison rule (tests/support/npy_compare.hpp) in numpy:
dtype and shape equal; integers and bools exactly; float16/float32 compared in float32,
float64 in float64, |got - want| <= atol + rtol * |want|; NaN equals NaN but no number;
infinities must be equal."""
import numpy as np


def mismatch(got, want, rtol, atol):
    """None when `got` matches `want`, else (description, max abs error or None)."""
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} != expected {want.dtype}", None
    if got.shape != want.shape:
        return f"shape {got.shape} != expected {want.shape}", None
    if want.dtype.kind in "iub":
        bad = got != want
        err = None
        if bad.any():
            err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    else:
        kind = np.float64 if want.dtype == np.float64 else np.float32
        g, w = got.astype(kind), want.astype(kind)
        gnan, wnan = np.isnan(g), np.isnan(w)
        ginf, winf = np.isinf(g), np.isinf(w)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(g - w)
            close = diff <= atol + rtol * np.abs(w)
        close = np.where(wnan | gnan, wnan & gnan, close)
        close = np.where(winf | ginf, g == w, close)
        bad = ~close
        finite = ~(gnan | wnan | ginf | winf)
        err = float(np.max(diff[finite])) if bad.any() and finite.any() else None
    if not bad.any():
        return None
    idx = np.argwhere(bad)
    first = ", ".join(f"{tuple(int(v) for v in i)}: got {got[tuple(i)]} want {want[tuple(i)]}"
                      for i in idx[:3])
    return f"{len(idx)} of {want.size} elements differ (max abs error {err}); {first}", err
