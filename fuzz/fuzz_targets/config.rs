//! The config file parser and validation on arbitrary text: an error names
//! what is wrong, never a panic.
#![no_main]

use clap::Parser;
use libfuzzer_sys::fuzz_target;
use tachyon::cli::Args;
use tachyon::config::Settings;

fuzz_target!(|text: &str| {
    let args = Args::parse_from(["tachyon", "/nonexistent-fuzz-root"]);
    if let Ok(settings) = Settings::from_config_text(&args, "fuzz.toml", text) {
        let _ = settings.to_toml();
    }
});
