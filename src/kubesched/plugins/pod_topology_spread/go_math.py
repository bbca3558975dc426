"""Go's math.Log and math.Round, bit for bit, for scores that match upstream's."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from kubesched.plugin.batch import Int

Float = npt.NDArray[np.float64]

# Go's math.Log (the FreeBSD algorithm; Go's amd64 assembly computes the same), which differs from
# the C library's log in the last bit for some arguments (e.g. 3): scores are rounded, so the
# weights must be bit-identical.
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
_L1, _L2, _L3, _L4 = (
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
)
_L5, _L6, _L7 = 1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01


def go_log(x: float) -> float:
    """Natural logarithm of a positive finite `x`, bit for bit as Go computes it."""
    fraction, exponent = math.frexp(x)
    if fraction < math.sqrt(2) / 2:
        fraction, exponent = fraction * 2, exponent - 1
    f, k = fraction - 1, float(exponent)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    r = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7))) + s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def go_round(x: float) -> int:
    """Round half away from zero (Go's math.Round) a non-negative `x`."""
    whole = math.floor(x)
    return int(whole) + (1 if x - whole >= 0.5 else 0)


def _go_round_array(x: Float) -> Int:
    whole = np.floor(x)
    out: Int = whole.astype(np.int64) + (x - whole >= 0.5)
    return out
