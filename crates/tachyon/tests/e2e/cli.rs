//! The command line: defaults, errors as one clear line, config files.

use crate::support::{run_tachyon, Server, TestSite};

fn tachyon(args: &[&str]) -> (i32, String, String) {
    let exit = run_tachyon(args);
    (exit.code.unwrap_or(-1), exit.stdout, exit.stderr)
}

#[test]
fn without_a_root_it_serves_the_current_directory_and_prints_the_url() {
    let site = TestSite::new();
    site.file("here.txt", "cwd");
    let server = Server::start_in(&site.root, &[]);
    let root = site.root.canonicalize().unwrap();
    assert!(
        server.url.starts_with("http://127.0.0.1:"),
        "{}",
        server.url
    );
    let serving = format!("serving {} on {}", root.display(), server.url);
    assert!(
        server.startup_line().starts_with(&serving),
        "{:?} does not start with {serving:?}",
        server.startup_line()
    );
}

#[test]
fn bad_input_is_one_clear_line_and_a_nonzero_exit() {
    let (code, _, err) = tachyon(&["--listen", "nonsense"]);
    assert_ne!(code, 0);
    assert!(err.contains("listen") && err.contains("nonsense"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    let (code, _, err) = tachyon(&["/definitely/not/here", "--listen", "127.0.0.1:0"]);
    assert_ne!(code, 0);
    assert!(err.contains("/definitely/not/here"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let (code, _, err) = tachyon(&["--no-such-flag"]);
    assert_ne!(code, 0);
    assert!(err.contains("--no-such-flag"), "{err}");

    let (code, _, err) = tachyon(&["--threads", "0", "--listen", "127.0.0.1:0"]);
    assert_ne!(code, 0);
    assert!(err.contains("threads"), "{err}");
}

#[test]
fn a_port_in_use_is_reported() {
    let site = TestSite::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let (code, _, err) = tachyon(&[site.root.to_str().unwrap(), "--listen", &addr]);
    assert_ne!(code, 0);
    assert!(err.contains(&addr) && err.contains("in use"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn config_file_sets_options_and_unknown_keys_are_named() {
    let site = TestSite::new();
    site.file("www/a.txt", "from config");
    site.file(
        "good.toml",
        format!(
            "root = {:?}\nthreads = 1\n[limits]\nidle_timeout = \"5s\"\n",
            site.path("www")
        ),
    );
    site.file("bad.toml", "threads = 1\nmax_memroy = \"1MiB\"\n");
    let (code, out, err) = tachyon(&[
        "--config",
        site.path("good.toml").to_str().unwrap(),
        "--print-config",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("threads = 1") && out.contains("idle_timeout = \"5s\""),
        "{out}"
    );
    let (code, _, err) = tachyon(&["--config", site.path("bad.toml").to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        err.contains("max_memroy") && err.contains("line 2"),
        "{err}"
    );
}

#[test]
fn config_root_is_served() {
    let site = TestSite::new();
    site.file("www/a.txt", "from config");
    site.file(
        "c.toml",
        format!(
            "root = {:?}\nlisten = [\"127.0.0.1:0\"]\n",
            site.path("www")
        ),
    );
    let server = Server::start_args(&["--config", site.path("c.toml").to_str().unwrap()]);
    assert_eq!(server.connect().get("/a.txt", "").text(), "from config");
}

#[test]
fn the_example_config_is_valid_and_print_config_round_trips() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tachyon.example.toml");
    let (code, printed, err) = tachyon(&["--config", example, "--print-config"]);
    assert_eq!(code, 0, "{err}");
    for key in [
        "[compression]",
        "[limits]",
        "[[headers]]",
        "[[redirects]]",
        "watch = true",
    ] {
        assert!(printed.contains(key), "{key} missing from:\n{printed}");
    }
    let site = TestSite::new();
    site.file("printed.toml", &printed);
    let (code, again, err) = tachyon(&[
        "--config",
        site.path("printed.toml").to_str().unwrap(),
        "--print-config",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        again, printed,
        "--print-config output is itself a valid config"
    );
}
