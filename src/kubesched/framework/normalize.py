"""DefaultNormalizeScore: rescale a score plugin's raw scores to [0, max_priority] in place."""

from __future__ import annotations

import numpy as np

from kubesched.cache.table import Int


def _truncating_div(a: int, b: int) -> int:
    """Integer division rounding toward zero, as Go's `/` on integers does."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def default_normalize_score(max_priority: int, reverse: bool, scores: list[int]) -> None:
    """Scale `scores` so that the highest becomes `max_priority` (integer division toward zero).

    With `reverse`, each scaled score `s` becomes `max_priority - s`, so the node with the highest
    raw score ends up with 0. When no score is above 0 nothing can be scaled: the scores are left
    alone, or with `reverse` every one becomes `max_priority`.
    """
    highest = max(max(scores, default=0), 0)
    if highest == 0:
        if reverse:
            scores[:] = [max_priority] * len(scores)
        return
    for i, raw in enumerate(scores):
        scaled = _truncating_div(max_priority * raw, highest)
        scores[i] = max_priority - scaled if reverse else scaled


def default_normalize_array(max_priority: int, reverse: bool, scores: Int) -> Int:
    """`default_normalize_score` over an array, returning the new scores."""
    highest = max(int(scores.max()), 0) if len(scores) else 0
    if highest == 0:
        return np.full(len(scores), max_priority, dtype=np.int64) if reverse else scores
    scaled = max_priority * scores
    scaled = np.where(scaled >= 0, scaled // highest, -(-scaled // highest))
    out: Int = max_priority - scaled if reverse else scaled
    return out
