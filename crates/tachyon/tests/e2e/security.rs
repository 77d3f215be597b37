//! Nothing outside the root is ever served, whatever the request says.

use crate::support::{Server, TestSite};

const SECRET: &str = "TOP-SECRET-OUTSIDE-ROOT";

#[test]
fn traversal_attempts_never_reach_outside_the_root() {
    let outside = TestSite::new();
    outside.file("secret.txt", SECRET);
    let site = TestSite::new();
    site.file("public/index.html", "public");
    let outside_name = outside
        .root
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let server = Server::start(&site.path("public"), &[]);
    let up = format!("../../{outside_name}/secret.txt");
    let targets = [
        format!("/{up}"),
        format!("/..%2f..%2f{outside_name}%2fsecret.txt"),
        format!("/%2e%2e/%2e%2e/{outside_name}/secret.txt"),
        format!("/%2E%2E%2F%2E%2E%2F{outside_name}%2Fsecret.txt"),
        format!("/..\\..\\{outside_name}\\secret.txt"),
        format!("/./../{up}"),
        format!("//..//..//{outside_name}//secret.txt"),
        "/%00../../etc/passwd".to_string(),
        "/index.html%00.txt".to_string(),
        "/../../../../../../etc/passwd".to_string(),
        format!("http://evil/../{up}"),
        format!("{}/secret.txt", outside.root.display()),
    ];
    for target in &targets {
        let mut c = server.connect();
        c.send(format!("GET {target} HTTP/1.1\r\nHost: a\r\n\r\n"));
        let r = c.response(false);
        assert!(
            matches!(r.status, 400 | 404),
            "{target}: status {}",
            r.status
        );
        assert!(!r.text().contains(SECRET), "{target} leaked the secret");
        assert!(!r.text().contains("root:"), "{target} leaked /etc/passwd");
    }
}

/// `--symlinks inside`: links leading out of the root are not served (nor
/// dotfiles, whatever the mode); links inside it are.
#[test]
fn symlinks_out_of_the_root_and_dotfiles_are_not_served() {
    let outside = TestSite::new();
    outside.file("secret.txt", SECRET);
    let site = TestSite::new();
    site.file("ok.txt", "ok")
        .file(".env", "KEY=1")
        .file(".git/config", "x")
        .file(".well-known/security.txt", "contact");
    std::os::unix::fs::symlink(outside.path("secret.txt"), site.path("link.txt")).unwrap();
    std::os::unix::fs::symlink(&outside.root, site.path("linkdir")).unwrap();
    std::os::unix::fs::symlink(site.path("ok.txt"), site.path("inside-link.txt")).unwrap();
    let server = Server::start(&site.root, &["--symlinks", "inside"]);
    let mut c = server.connect();
    for path in [
        "/link.txt",
        "/linkdir/secret.txt",
        "/.env",
        "/.git/config",
        "/%2eenv",
        "/%2egit/config",
    ] {
        let r = c.get(path, "");
        assert_eq!(r.status, 404, "{path}");
        assert!(!r.text().contains(SECRET), "{path}");
    }
    assert_eq!(
        c.get("/inside-link.txt", "").text(),
        "ok",
        "symlinks inside the root work"
    );
    assert_eq!(c.get("/.well-known/security.txt", "").text(), "contact");
}

/// By default every symlink is followed, as nginx, Apache, Caddy and
/// static-web-server do, but a link to a dotfile, or into a hidden folder,
/// is not; `--symlinks never` serves no link, and `owner` only links whose
/// target has the link's owner.
#[test]
fn symlinks_are_followed_by_default_but_never_to_dotfiles() {
    let outside = TestSite::new();
    outside
        .file("lib/jquery.js", "jq")
        .file(".secret", SECRET)
        .file(".hidden/x.js", SECRET);
    let site = TestSite::new();
    site.file("ok.txt", "ok");
    let link = |from: std::path::PathBuf, to: &str| {
        std::os::unix::fs::symlink(from, site.path(to)).unwrap()
    };
    link(outside.path("lib/jquery.js"), "jquery.js");
    link(outside.path("lib"), "lib");
    link(outside.path(".secret"), "env.txt");
    link(outside.path(".hidden/x.js"), "x.js");
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    assert_eq!(c.get("/jquery.js", "").text(), "jq");
    assert_eq!(c.get("/lib/jquery.js", "").text(), "jq");
    for path in ["/env.txt", "/x.js"] {
        let r = c.get(path, "");
        assert_eq!(r.status, 404, "{path}");
        assert!(!r.text().contains(SECRET), "{path}");
    }
    let never = Server::start(&site.root, &["--symlinks", "never"]);
    assert_eq!(never.connect().get("/jquery.js", "").status, 404);
    assert_eq!(never.connect().get("/ok.txt", "").text(), "ok");
    // The tests run as one user: every link and target share an owner,
    // but a target owned by another user (chown needs root) is refused.
    let owner = Server::start(&site.root, &["--symlinks", "owner"]);
    assert_eq!(owner.connect().get("/jquery.js", "").text(), "jq");
    if rustix::process::geteuid().is_root() {
        let other = outside.path("lib/other.js");
        std::fs::write(&other, "theirs").unwrap();
        rustix::fs::chown(&other, Some(rustix::fs::Uid::from_raw(65534)), None).unwrap();
        link(other, "other.js");
        let owner = Server::start(&site.root, &["--symlinks", "owner"]);
        assert_eq!(owner.connect().get("/other.js", "").status, 404);
        assert_eq!(server.connect().get("/jquery.js", "").text(), "jq");
    }
}

/// The Landlock sandbox (on by default) lets the process read only its
/// roots and where their symlinks led at start: a reload that meets a new
/// symlink to a file outside is refused by the kernel, the log names the
/// file, and the previous site keeps serving. With `--no-sandbox` the same
/// link is followed, so it is the sandbox that refuses.
#[test]
fn the_sandbox_keeps_a_reload_inside_the_roots() {
    let site = TestSite::new();
    site.file("www/index.html", "before");
    site.file("outside/secret.txt", "secret");
    site.file("outside/early/shared.js", "early");
    std::os::unix::fs::symlink(site.path("outside/early"), site.path("www/lib")).unwrap();
    let root = site.path("www");
    let server = Server::start(&root, &["--no-watch", "--follow-outside-symlinks"]);
    assert_eq!(server.connect().get("/lib/shared.js", "").text(), "early");
    std::os::unix::fs::symlink(site.path("outside/secret.txt"), site.path("www/secret.txt"))
        .unwrap();
    site.file("www/index.html", "after");
    server.signal(rustix::process::Signal::HUP);
    let failed = server
        .wait_for_line("failed", std::time::Duration::from_secs(10))
        .expect("the reload fails");
    assert!(failed.contains("secret.txt"), "{failed}");
    assert!(failed.contains("Permission denied"), "{failed}");
    assert!(failed.contains("--no-sandbox"), "{failed}");
    let mut conn = server.connect();
    assert_eq!(conn.get("/", "").text(), "before");
    assert_eq!(conn.get("/secret.txt", "").status, 404);
    assert_eq!(conn.get("/lib/shared.js", "").text(), "early");

    let open = Server::start(
        &root,
        &["--no-watch", "--follow-outside-symlinks", "--no-sandbox"],
    );
    assert_eq!(open.connect().get("/secret.txt", "").text(), "secret");
}

/// The sandbox grants a symlinked root's target tree, not the folder that
/// holds the link: with `current -> releases/v2`, a link added later that
/// leads to a file beside `current` is refused by the kernel (it was
/// served when the folder was granted).
#[test]
fn the_sandbox_grants_a_symlinked_roots_target_not_its_folder() {
    let site = TestSite::new();
    site.file("releases/v2/index.html", "v2")
        .file("secret.txt", SECRET);
    let current = site.path("current");
    std::os::unix::fs::symlink(site.path("releases/v2"), &current).unwrap();
    let server = Server::start(&current, &["--no-watch", "--follow-outside-symlinks"]);
    assert_eq!(server.connect().get("/", "").text(), "v2");
    std::os::unix::fs::symlink(site.path("secret.txt"), site.path("releases/v2/leak.txt")).unwrap();
    server.signal(rustix::process::Signal::HUP);
    let failed = server
        .wait_for_line("failed", std::time::Duration::from_secs(10))
        .expect("the reload is refused");
    assert!(failed.contains("Permission denied"), "{failed}");
    let r = server.connect().get("/leak.txt", "");
    assert_eq!(r.status, 404);
    assert!(!r.text().contains(SECRET));
}
