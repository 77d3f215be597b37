//! The configuration side of the `tachyon` binary, as a library so that
//! the fuzz targets and tests can drive it: the command line as typed
//! ([`cli`]) and the settings parsed from it and the config file
//! ([`config`]). The binary (`main.rs`) wires these to the server.

pub mod cli;
pub mod config;
