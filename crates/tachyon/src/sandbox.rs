//! The sandbox: Landlock confines the process, for the rest of its life,
//! to reading what it serves and needs (its roots, certificates, config
//! file, its own binary and the system's shared libraries for an upgrade's
//! exec) and writing only its access log's folder and its cache folder;
//! with `--acme`, also its ACME folder, and reading what an HTTPS client
//! of the CA needs (the CA root given, else the system's roots, and the
//! resolver's files).
//!
//! It is applied first thing in `run`, on the main thread, before any other
//! thread exists: Landlock binds the calling thread and what it starts
//! afterwards (threads and processes, an upgrade's successor included),
//! never threads that already run. Everything read later, a reload, a
//! renewed certificate, a reopened log, then goes through it, so a file
//! reached through a symlink that points outside the roots, added after
//! the start, is refused by the kernel.
//!
//! Directories may be listed anywhere (see `confine`). A root is granted
//! as the directory it is at start (through its symlink, for a root that is
//! one: the target tree, not the folder holding the link); a root deleted
//! and made again, or a root symlink repointed, is a new directory the
//! rules do not cover, and the reloader starts a successor that confines
//! itself to it (`launcher`). Where symlinks are followed out of a root
//! (`--symlinks follow`, the default, or `owner`), the targets they have at
//! start are readable too; a link added later that leads elsewhere is
//! refused by the kernel until the next start.
//!
//! This module decides the rules; it reads no file's content.

use std::path::{Path, PathBuf};

use landlock::{
    path_beneath_rules, Access, AccessFs, BitFlags, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, ABI,
};
use tachyon::config::{Identity, Settings};
use tachyon_server::access::Target;
use tachyon_snapshot::Symlinks;

/// The newest Landlock ABI whose rights we ask for; older kernels get
/// what they support (the crate's best-effort mode), and say so.
const ABI_WANTED: ABI = ABI::V5;

/// How confined the process ended up.
pub enum Confinement {
    Full,
    /// The kernel enforces some of the rules (an older Landlock ABI).
    Partial,
    /// The kernel has no Landlock.
    None,
}

/// Confines this thread and everything it starts from now on.
pub fn confine(settings: &Settings) -> anyhow::Result<Confinement> {
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    let read_exec = AccessFs::from_read(ABI_WANTED);
    let file_read: BitFlags<AccessFs> = AccessFs::ReadFile.into();

    let readable = readable_paths(settings);
    let executable = executable_paths();

    let mut files: Vec<PathBuf> = vec!["/etc/ld.so.cache".into()];
    if settings.user.is_some() {
        // A successor looks the user up again.
        files.extend(["/etc/passwd", "/etc/group", "/etc/nsswitch.conf"].map(PathBuf::from));
    }

    let log_folder = log_folders(settings);
    let log_rights = AccessFs::WriteFile | AccessFs::MakeReg | AccessFs::Truncate;
    // The variants kept across restarts, and the dictionary versions, in a
    // folder per root made when the root is first loaded (MakeDir).
    let cache: Vec<PathBuf> = settings.cache_dir.iter().cloned().collect();
    let cache_rights = AccessFs::ReadFile
        | AccessFs::ReadDir
        | AccessFs::WriteFile
        | AccessFs::MakeReg
        | AccessFs::MakeDir
        | AccessFs::RemoveFile
        | AccessFs::Truncate;
    // The datagram socket a successor reports readiness on.
    let temp = vec![std::env::temp_dir()];
    let temp_rights = AccessFs::MakeSock | AccessFs::RemoveFile;

    // Directories may be opened anywhere, files read only as above: the walk
    // (walkdir's loop check) opens the target of every symlinked directory,
    // even one the policy then leaves out. Names are not contents.
    let everywhere = vec![PathBuf::from("/")];

    let (acme_dir, acme_read) = acme_paths(settings);
    let acme_rights = cache_rights | AccessFs::MakeDir | AccessFs::RemoveDir;
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(ABI_WANTED))?
        .create()?
        .add_rules(path_beneath_rules(&everywhere, AccessFs::ReadDir))?
        .add_rules(path_beneath_rules(&readable, read))?
        .add_rules(path_beneath_rules(&executable, read_exec))?
        .add_rules(path_beneath_rules(&files, file_read))?
        .add_rules(path_beneath_rules(&log_folder, log_rights))?
        .add_rules(path_beneath_rules(&temp, temp_rights))?
        .add_rules(path_beneath_rules(&cache, cache_rights))?
        .add_rules(path_beneath_rules(&acme_dir, acme_rights))?
        .add_rules(path_beneath_rules(&acme_read, read))?
        .restrict_self()?;
    Ok(match status.ruleset {
        RulesetStatus::FullyEnforced => Confinement::Full,
        RulesetStatus::PartiallyEnforced => Confinement::Partial,
        RulesetStatus::NotEnforced => Confinement::None,
    })
}

/// What the process reads: the roots, the targets of their symlinks
/// outside them, the config file, the certificates.
fn readable_paths(settings: &Settings) -> Vec<PathBuf> {
    // A rule names the inode its path leads to: a root that is a symlink
    // (`current -> releases/v2`) grants the release it points to, never
    // the folder holding the link and every other release beside it.
    let mut readable: Vec<PathBuf> = std::iter::once(settings.root.clone())
        .chain(settings.hosts.iter().map(|h| h.root.clone()))
        .collect();
    readable.extend(outside_targets(settings));
    readable.extend(settings.config_file.iter().cloned());
    readable.extend(certificate_folders(settings));
    // The fd limit's estimate reads /proc/self/fd.
    readable.push("/proc/self".into());
    readable
}

/// What the process maps to run: the shared libraries, and its own binary
/// for an upgrade.
fn executable_paths() -> Vec<PathBuf> {
    let mut executable: Vec<PathBuf> = ["/usr/lib", "/usr/lib64", "/lib", "/lib64"]
        .iter()
        .map(PathBuf::from)
        .collect();
    // The folder, not the file: an upgrade installs the new binary by
    // rename, a new inode a rule on the old file would not cover.
    executable.extend(std::env::current_exe().ok().map(|exe| folder_of(&exe)));
    executable
}

/// Where the process writes logs: the access log's folder, and the TLS
/// key log's.
fn log_folders(settings: &Settings) -> Vec<PathBuf> {
    let mut log_folder: Vec<PathBuf> = match &settings.log.access {
        Some(Target::File(path)) => vec![folder_of(path)],
        _ => Vec::new(),
    };
    // SSLKEYLOGFILE: TLS secrets for a debugger (rustls's KeyLogFile),
    // written only when the operator names the file.
    if let Some(path) = std::env::var_os("SSLKEYLOGFILE").filter(|p| !p.is_empty()) {
        log_folder.push(folder_of(Path::new(&path)));
    }
    log_folder
}

/// Where a root's symlinks lead outside it at start (a file or a whole
/// folder), when links are followed out of it, found by a walk that reads
/// no file and follows no link. A link added or repointed later leads
/// outside the rules: the reload that meets it fails and says why.
fn outside_targets(settings: &Settings) -> Vec<PathBuf> {
    let roots = std::iter::once((settings.root.as_path(), &settings.load))
        .chain(settings.hosts.iter().map(|h| (h.root.as_path(), &h.load)));
    let mut targets = Vec::new();
    for (root, load) in roots {
        if matches!(load.symlinks, Symlinks::Inside | Symlinks::Never) {
            continue;
        }
        let Ok(real_root) = root.canonicalize() else {
            continue;
        };
        for entry in walkdir::WalkDir::new(&real_root).into_iter().flatten() {
            if !entry.path_is_symlink() {
                continue;
            }
            if let Ok(target) = entry.path().canonicalize() {
                if !target.starts_with(&real_root) {
                    targets.push(target);
                }
            }
        }
    }
    targets
}

/// With `--acme`: its folder (made before the rules, which name inodes),
/// and what the client of the CA reads: the CA root given or the system's
/// roots, and the files name resolution reads.
fn acme_paths(settings: &Settings) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let Some(acme) = &settings.acme else {
        return (Vec::new(), Vec::new());
    };
    let mut read: Vec<PathBuf> = [
        "/etc/resolv.conf",
        "/etc/hosts",
        "/etc/nsswitch.conf",
        "/etc/gai.conf",
        "/etc/host.conf",
    ]
    .map(PathBuf::from)
    .into_iter()
    .filter(|p| p.exists())
    .collect();
    match &acme.ca_root {
        Some(root) => read.push(root.clone()),
        None => read.extend(
            [
                "/etc/ssl/certs",
                "/usr/share/ca-certificates",
                "/etc/ca-certificates",
            ]
            .map(PathBuf::from)
            .into_iter()
            .filter(|p| p.exists()),
        ),
    }
    (vec![acme.dir.clone()], read)
}

/// The folders holding the certificates and keys, and those of the files
/// they link to: a renewal (certbot's `live/` links into `archive/`)
/// writes new files there, which a rule on the old file would not cover.
fn certificate_folders(settings: &Settings) -> Vec<PathBuf> {
    let Some(tls) = &settings.tls else {
        return Vec::new();
    };
    let mut files = Vec::new();
    if let Identity::Files(keys) = &tls.identity {
        files.extend([keys.cert.clone(), keys.key.clone()]);
    }
    for host in &settings.hosts {
        if let Some(keys) = &host.tls {
            files.extend([keys.cert.clone(), keys.key.clone()]);
        }
    }
    let mut folders = Vec::new();
    for file in files {
        folders.push(folder_of(&file));
        if let Ok(target) = std::fs::canonicalize(&file) {
            folders.push(folder_of(&target));
        }
    }
    folders
}

fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
