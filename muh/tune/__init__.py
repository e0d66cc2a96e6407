"""`muh tune`: measure a spec's policy spaces on the present GPU(s), keep every trial, write winners back.

space → static filter → strategy → compile units (local pool or Ray) → one measurement worker per
GPU → SQLite → confirmation with an A/A twin → decision → `--apply` (docs/tune.md).
"""
