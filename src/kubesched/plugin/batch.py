"""The plugin API's vectorised tier: Filter and Score over every node at once, on the columns of the
`NodeTable` (one row per node), and the helpers that bridge the per-node and batched paths.

A plugin that declares `FilterBatchPlugin` or `ScoreBatchPlugin` gets the whole table in one call
and answers with a mask or a score array; `filter_per_node`, `score_per_node` and `filter_memo`
build those answers from a per-node function; `FailureSignatures` and `HintKeys` let the runtime
group nodes that fail alike and skip hints that cannot change a verdict.
"""

from kubesched.cache.table import Bool, Int, NodeTable, RowNodes
from kubesched.framework.batch import fails, filter_memo, filter_per_node, score_per_node, zeros
from kubesched.framework.interface import (
    FailureSignatures,
    FilterBatchPlugin,
    HintKeys,
    Mask,
    NormalizeScoreBatch,
    QueueSortKey,
    Rows,
    ScoreBatchPlugin,
    Scores,
)
from kubesched.framework.normalize import default_normalize_array

__all__ = [
    "Bool",
    "FailureSignatures",
    "FilterBatchPlugin",
    "HintKeys",
    "Int",
    "Mask",
    "NodeTable",
    "NormalizeScoreBatch",
    "QueueSortKey",
    "RowNodes",
    "Rows",
    "ScoreBatchPlugin",
    "Scores",
    "default_normalize_array",
    "fails",
    "filter_memo",
    "filter_per_node",
    "score_per_node",
    "zeros",
]
