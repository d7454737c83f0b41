"""One module per on-disk layout of a NOVA release, each with its reader and its writer.

- ``v1``: the official ``data/nova-v1.parquet`` + ``images/`` (written by sample, ingest);
- ``legacy``: the older CSV files + ``test/`` (written by sample, ingest);
- ``export``: Hub-ready Parquet shards with embedded PNGs (written by ``nova export``);
- ``rows``: the row types the readers give and the writers take.

``novabench.data.release.read_release`` detects the layout and dispatches here.
"""

#: Upper bound of one image shard of an export (``nova export --max-shard-mb``); here, not
#: in ``export``, so that the command line reads it without importing ``datasets``.
DEFAULT_MAX_SHARD_BYTES = 256 * 1024 * 1024
