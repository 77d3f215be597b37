//! Servers that a killed run left running. A run starts each server as the
//! leader of its own process group and stops the group when the server is
//! done (`peers::Running`); a run killed outright (SIGKILL, a crash, a
//! closed terminal) stops nothing, and its servers keep their ports, CPU
//! and memory through the next run's measurements. So each started server
//! is noted in tachyon-bench's cache while it runs (its group, its
//! leader's start time, and the run's own pid and start time), and the note
//! is removed when the server is stopped; a run stops, before it starts
//! anything, the groups noted by runs that are gone.
//!
//! Owns those notes alone; starting and stopping a server is `peers`'s.
//! Invariant: a signal goes only to a process of a noted group that started
//! no earlier than the group's leader, noted by a run that is no longer
//! alive: a live run's servers and a reused pid are left alone.

use std::path::{Path, PathBuf};

/// Where notes live: one file per running server, named by its group.
fn notes_dir() -> PathBuf {
    crate::sources::cache_dir().join("running")
}

/// A started server's note; removed on drop.
#[derive(Debug)]
pub struct Noted {
    path: PathBuf,
}

impl Drop for Noted {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Notes the server whose group leader is `leader`, best effort: a cache
/// that cannot be written costs only the clean-up after a killed run.
pub fn note(leader: u32, name: &str) -> Option<Noted> {
    note_in(&notes_dir(), leader, name)
}

fn note_in(dir: &Path, leader: u32, name: &str) -> Option<Noted> {
    let run = std::process::id();
    let line = format!(
        "{run} {} {leader} {} {name}\n",
        crate::proc::start_time(run)?,
        crate::proc::start_time(leader)?
    );
    std::fs::create_dir_all(dir).ok()?;
    let path = dir.join(leader.to_string());
    std::fs::write(&path, line).ok()?;
    Some(Noted { path })
}

/// One note, read back.
#[derive(Debug, PartialEq, Eq)]
struct Note {
    run: u32,
    run_start: u64,
    group: u32,
    leader_start: u64,
    name: String,
}

impl Note {
    fn parse(text: &str) -> Option<Note> {
        let mut fields = text.trim().splitn(5, ' ');
        let mut number = || fields.next()?.parse::<u64>().ok();
        let (run, run_start, group, leader_start) = (number()?, number()?, number()?, number()?);
        Some(Note {
            run: u32::try_from(run).ok()?,
            run_start,
            group: u32::try_from(group).ok()?,
            leader_start,
            name: fields.next()?.to_string(),
        })
    }

    /// The run that wrote the note is still alive (its pid, same start).
    fn run_alive(&self) -> bool {
        crate::proc::start_time(self.run) == Some(self.run_start)
    }

    /// The group's processes that are the server's: none when its leader's
    /// pid now names another process.
    fn members(&self) -> Vec<u32> {
        match crate::proc::start_time(self.group) {
            Some(start) if start != self.leader_start => return Vec::new(),
            _ => {}
        }
        crate::proc::group_members(self.group)
            .into_iter()
            .filter(|&p| crate::proc::start_time(p).is_some_and(|s| s >= self.leader_start))
            .collect()
    }
}

/// Stops the servers noted by runs that are gone; one line for each it
/// stopped.
pub fn stop_left() -> Vec<String> {
    stop_left_in(&notes_dir())
}

fn stop_left_in(dir: &Path) -> Vec<String> {
    let mut stopped = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return stopped;
    };
    for entry in entries.flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        let Some(note) = Note::parse(&text) else {
            let _ = std::fs::remove_file(entry.path());
            continue;
        };
        if note.run_alive() {
            continue;
        }
        let members = note.members();
        for &p in &members {
            if let Some(pid) = rustix::process::Pid::from_raw(p as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        if !members.is_empty() {
            stopped.push(format!(
                "stopped {} ({} process{}), left running by a run that was killed",
                note.name,
                members.len(),
                if members.len() == 1 { "" } else { "es" }
            ));
        }
        let _ = std::fs::remove_file(entry.path());
    }
    stopped
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    use tachyon_testkit::Scratch;

    use super::*;

    /// The notes left in a test's notes folder.
    fn notes(dir: &Scratch) -> usize {
        std::fs::read_dir(dir.path()).map_or(0, |entries| entries.count())
    }

    /// A stand-in server: `sh` leading its own group, with a child (once
    /// both are up).
    fn server() -> Child {
        let leader = Command::new("sh")
            .args(["-c", "sleep 60 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while crate::proc::group_members(leader.id()).len() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        leader
    }

    /// A pid and start time of a run that has ended.
    fn gone_run() -> (u32, u64) {
        let mut child = Command::new("sleep").arg("0.2").spawn().unwrap();
        let start = crate::proc::start_time(child.id()).unwrap();
        let pid = child.id();
        child.wait().unwrap();
        (pid, start)
    }

    fn write(dir: &Path, run: (u32, u64), leader: u32, leader_start: u64) {
        std::fs::create_dir_all(dir).unwrap();
        let line = format!(
            "{} {} {leader} {leader_start} nginx-mainline\n",
            run.0, run.1
        );
        std::fs::write(dir.join(leader.to_string()), line).unwrap();
    }

    /// The group is empty within a few seconds (the child is reaped by
    /// init, the leader by us).
    fn ended(leader: &mut Child) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            let _ = leader.try_wait();
            if crate::proc::group_members(leader.id()).is_empty() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    fn stop(mut leader: Child) {
        let pid = rustix::process::Pid::from_child(&leader);
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        let _ = leader.wait();
    }

    #[test]
    fn a_killed_runs_server_and_its_children_are_stopped() {
        let dir = Scratch::new("leftovers-killed");
        let mut leader = server();
        let start = crate::proc::start_time(leader.id()).unwrap();
        assert_eq!(crate::proc::group_members(leader.id()).len(), 2);
        write(dir.path(), gone_run(), leader.id(), start);
        let stopped = stop_left_in(dir.path());
        assert_eq!(
            stopped,
            ["stopped nginx-mainline (2 processes), left running by a run that was killed"]
        );
        assert!(ended(&mut leader));
        assert_eq!(notes(&dir), 0);
    }

    #[test]
    fn a_live_runs_servers_are_left_alone() {
        let dir = Scratch::new("leftovers-live");
        let leader = server();
        let noted = note_in(dir.path(), leader.id(), "nginx-mainline").unwrap();
        assert!(stop_left_in(dir.path()).is_empty());
        assert_eq!(crate::proc::group_members(leader.id()).len(), 2);
        assert!(noted.path.exists());
        drop(noted);
        assert_eq!(notes(&dir), 0);
        stop(leader);
    }

    #[test]
    fn a_group_whose_leader_pid_names_another_process_is_left_alone() {
        let dir = Scratch::new("leftovers-reused");
        let leader = server();
        let start = crate::proc::start_time(leader.id()).unwrap();
        // As if the noted leader had ended and its pid been given to this one.
        write(dir.path(), gone_run(), leader.id(), start + 1);
        assert!(stop_left_in(dir.path()).is_empty());
        assert_eq!(crate::proc::group_members(leader.id()).len(), 2);
        assert_eq!(notes(&dir), 0);
        stop(leader);
    }

    #[test]
    fn a_note_reads_back_as_written() {
        let note = Note::parse("12 345 678 910 h2o-master\n").unwrap();
        let expected = Note {
            run: 12,
            run_start: 345,
            group: 678,
            leader_start: 910,
            name: "h2o-master".into(),
        };
        assert_eq!(note, expected);
        assert_eq!(Note::parse("12 345 h2o"), None);
    }
}
