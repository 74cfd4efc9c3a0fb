"""The workers' side of the data: the engine-neutral `boostlab._shards` (shared with
`boostlab.spark`), under the names the Dask package uses."""

from __future__ import annotations

from .._shards import (  # noqa: F401 (the Dask package's and its tests' names)
    _assemble_shard,
    _merge_summaries,
    _part_columns,
    _part_info,
    _rank_weights,
    _shard_summary,
    _weight_prefix,
    global_meta,
)
