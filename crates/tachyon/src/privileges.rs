//! `--user`: dropping root once every socket is bound and the access log
//! is open, so a privileged port needs root only until then.

use anyhow::Context;

/// Switches the whole process (every thread: glibc's setuid reaches them
/// all) to `name` and its primary group, dropping supplementary groups.
/// Called once the listeners (admin included) are bound and the access
/// log is open, so a privileged port needs root only until then. Files opened before (the access log, kept-open disk
/// bodies) stay open; what is read later (reloads, renewed certificates,
/// a reopened log) must be readable by that user.
pub(crate) fn become_user(user: nix::unistd::User) -> anyhow::Result<()> {
    use nix::unistd::{setgid, setgroups, setuid, Uid};
    let name = &user.name;
    if Uid::effective() == user.uid {
        return Ok(());
    }
    if !Uid::effective().is_root() {
        anyhow::bail!("user: switching to {name:?} needs root");
    }
    setgroups(&[user.gid]).context("user: dropping supplementary groups")?;
    setgid(user.gid).context("user: setgid")?;
    setuid(user.uid).context("user: setuid")?;
    Ok(())
}

pub(crate) fn lookup_user(name: &str) -> anyhow::Result<nix::unistd::User> {
    nix::unistd::User::from_name(name)
        .with_context(|| format!("user: looking up {name:?}"))?
        .ok_or_else(|| anyhow::anyhow!("user: there is no user {name:?}"))
}
