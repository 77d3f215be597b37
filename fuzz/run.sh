#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 20) on its stored corpus,
# then minimizes nothing and keeps what it found in fuzz/corpus/TARGET.
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-20}"
for target in request range conditional accept_encoding site_path config h2_frames hpack hpack_differential; do
    mkdir -p "corpus/$target"
    cargo +nightly fuzz run "$target" "corpus/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 2>&1 \
        | grep -E "^(stat::number_of_executed_units|Done|==[0-9]+==|SUMMARY|thread)" \
        | sed "s/^/$target: /"
done
