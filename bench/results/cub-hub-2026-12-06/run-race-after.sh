#!/usr/bin/env bash
# Session 3 of 2026-12-06, device call 7: the race (CUB's own policies vs the hubs generated from specs/h200.muh) after
# the scan hub's load/store became warp_transpose.
# run(command="bash .dev/call7.sh", carry=[".dev/race", ".dev/call7.sh"])
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
(cd .dev/race && timeout 90 ./race) > "$OUT/race.jsonl" 2>&1; echo "race rc=$?"
grep -c '"same as CUB"' "$OUT/race.jsonl"; grep -v '"same as CUB"' "$OUT/race.jsonl" | grep status
grep cub_over_hub "$OUT/race.jsonl" | cut -c1-200
