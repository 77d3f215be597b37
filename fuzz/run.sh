#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 20) on its stored corpus.
# What it finds goes to a scratch folder that is removed after, so a run
# leaves the checkout as it was (a long run meant to grow the corpus runs
# `cargo +nightly fuzz run TARGET corpus/TARGET` and minimizes it after).
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-20}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for target in request h1_syntax range conditional accept_encoding site_path config h2_frames hpack hpack_differential hpack_encode qpack h3_frames; do
    mkdir -p "corpus/$target" "$scratch/$target"
    # libFuzzer writes new inputs to the first folder and only reads the others.
    cargo +nightly fuzz run "$target" "$scratch/$target" "corpus/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 2>&1 \
        | grep -E "^(stat::number_of_executed_units|Done|==[0-9]+==|SUMMARY|thread)" \
        | sed "s/^/$target: /"
done
