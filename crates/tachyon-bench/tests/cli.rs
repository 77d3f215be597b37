//! The `tachyon-bench` binary as a shell user meets it: commands whose
//! output goes into a pipe, on a finished run committed under
//! `bench/results/`.

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A finished run of the repository: results.json with every peer.
fn committed_run() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench/results/seeds-cubic-2026-12-04/sparecores-1k")
}

fn bench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tachyon-bench"))
}

#[test]
fn cells_prints_a_row_per_cell() {
    let out = bench().arg("cells").arg(committed_run()).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("| sparecores | 1k t2 c4 |"), "{text}");
}

/// `tachyon-bench cells DIR | head`: the reader has gone before the table
/// is written (and the same for `figures` and `run --plan`). The command
/// ends with success and says nothing, where `print!` panicked ("failed
/// printing to stdout: Broken pipe", exit 101).
#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    let run = committed_run();
    let plan = ["run", "--suite", "smoke", "--servers", "floor", "--plan"];
    for args in [&["cells"][..], &["figures"], &plan] {
        let command = args.join(" ");
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut bench = bench();
        bench.args(args);
        if args[0] != "run" {
            bench.arg(&run);
        }
        let out = bench
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{command}: {:?} {stderr}", out.status);
        assert!(stderr.is_empty(), "{command}: {stderr}");
    }
}
