#!/usr/bin/env bash
# Runs one fuzz target for 1,000,000 executions or 10 minutes, whichever comes first, on one core,
# with the robustness limits (1 s per input, 2 GB of memory), from the built binary so that a
# concurrent edit of the library cannot trigger a rebuild mid-run:
#   cargo +nightly fuzz build -O            # once (from fuzz/)
#   bash run.sh TARGET [extra libFuzzer flags]
# New inputs go to corpus-raw/TARGET (seeded from corpus/TARGET); crashes to artifacts/TARGET/.
# Then minimise into the committed corpus, keeping every covered edge (not every hit count, so the
# committed corpora stay under 1 MB in all):
#   BIN -set_cover_merge=1 -use_counters=0 corpus/TARGET corpus-raw/TARGET
# (`cargo +nightly fuzz cmin TARGET` does a plain -merge=1 and keeps several times more files.)
set -euo pipefail
cd "$(dirname "$0")"
t=$1
shift
bin=target/x86_64-unknown-linux-gnu/release/$t
mkdir -p "corpus-raw/$t" "artifacts/$t" logs
if [ -d "corpus/$t" ]; then cp -n corpus/"$t"/* "corpus-raw/$t/" 2>/dev/null || true; fi
"$bin" "corpus-raw/$t" -artifact_prefix="artifacts/$t/" -timeout=1 -rss_limit_mb=2048 -runs=1000000 \
    -max_total_time=600 -print_final_stats=1 "$@" 2>&1 | tee "logs/$t.log" | grep -E "^(#[0-9]+ *(DONE|pulse)|stat::|==[0-9]+==|SUMMARY|artifact)" || true
