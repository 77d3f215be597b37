//! The floor: the least work a keep-alive HTTP/1.1 exchange can cost on this
//! kernel, as a reference every efficiency figure is divided by.
//!
//! One thread per core, each with its own edge-triggered epoll, all
//! waiting on one shared listener; a connection is taken by the thread
//! holding the fewest, so that two connections land on two threads the way
//! tachyon's hand-off spreads them, rather than where `SO_REUSEPORT`'s hash
//! puts them; every response is precomputed at start. Per request
//! it only finds the end of the head (`\r\n\r\n`) and the path between the
//! first two spaces, to pick the response of the right size (a floor that
//! sent 1 KiB for a 512 KiB cell would not be a floor). No header is parsed,
//! nothing is validated, Date is fixed at start: it is not a web server.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rustix::event::epoll;
use rustix::io::{Errno, IoSlice};
use rustix::net::{self, AddressFamily, SocketFlags, SocketType};

/// Precomputed responses, and the path → response index.
struct Responses {
    bodies: Vec<Box<[u8]>>,
    by_path: HashMap<Vec<u8>, usize>,
    not_found: usize,
}

/// Serves every file under `root` at `127.0.0.1:port` until killed.
pub fn serve(port: u16, threads: usize, root: &Path) -> anyhow::Result<()> {
    let responses = Arc::new(precompute(root)?);
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let listener = Arc::new(listen(addr)?);
    let loads: Arc<[AtomicUsize]> = (0..threads).map(|_| AtomicUsize::new(0)).collect();
    let handles: Vec<_> = (0..threads)
        .map(|id| {
            let (responses, listener) = (Arc::clone(&responses), Arc::clone(&listener));
            let loads = Arc::clone(&loads);
            std::thread::spawn(move || worker(&listener, &responses, &loads, id))
        })
        .collect();
    for handle in handles {
        handle
            .join()
            .map_err(|_| anyhow::anyhow!("floor worker panicked"))??;
    }
    Ok(())
}

fn precompute(root: &Path) -> io::Result<Responses> {
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let mut bodies: Vec<Box<[u8]>> = Vec::new();
    let mut by_path = HashMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let body = std::fs::read(&path)?;
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            let mut response = format!(
                "HTTP/1.1 200 OK\r\nServer: floor\r\nDate: {date}\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )
            .into_bytes();
            response.extend_from_slice(&body);
            bodies.push(response.into_boxed_slice());
            if rel == "index.html" {
                by_path.insert(b"/".to_vec(), bodies.len() - 1);
            }
            by_path.insert(format!("/{rel}").into_bytes(), bodies.len() - 1);
        }
    }
    let not_found = format!(
        "HTTP/1.1 404 Not Found\r\nServer: floor\r\nDate: {date}\r\nContent-Length: 0\r\n\r\n"
    );
    bodies.push(not_found.into_bytes().into_boxed_slice());
    Ok(Responses {
        not_found: bodies.len() - 1,
        bodies,
        by_path,
    })
}

fn listen(addr: SocketAddr) -> io::Result<OwnedFd> {
    let fd = net::socket_with(
        AddressFamily::INET,
        SocketType::STREAM,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )?;
    net::sockopt::set_socket_reuseaddr(&fd, true)?;
    // No congestion control of its own: the system's, as every server of
    // a run (`congestion`).
    net::bind(&fd, &addr)?;
    net::listen(&fd, 4096)?;
    Ok(fd)
}

struct Conn {
    fd: OwnedFd,
    partial: Vec<u8>,
    /// (response index, bytes already written)
    pending: VecDeque<(usize, usize)>,
}

const LISTENER: u64 = u64::MAX;

fn worker(
    listener: &OwnedFd,
    responses: &Responses,
    loads: &[AtomicUsize],
    id: usize,
) -> anyhow::Result<()> {
    let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
    epoll::add(
        &epoll,
        listener,
        epoll::EventData::new_u64(LISTENER),
        epoll::EventFlags::IN,
    )?;
    let mut conns: slab_lite::Slab<Conn> = slab_lite::Slab::default();
    let mut events = Vec::with_capacity(1024);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        events.clear();
        match epoll::wait(&epoll, rustix::buffer::spare_capacity(&mut events), None) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        for event in &events {
            let token = event.data.u64();
            if token == LISTENER {
                // Every thread wakes (level-triggered, shared); the one
                // holding the fewest connections takes one.
                let mine = loads[id].load(Ordering::Relaxed);
                if loads.iter().any(|l| l.load(Ordering::Relaxed) < mine) {
                    std::thread::yield_now();
                    continue;
                }
                if let Ok(fd) =
                    net::accept_with(listener, SocketFlags::NONBLOCK | SocketFlags::CLOEXEC)
                {
                    loads[id].fetch_add(1, Ordering::Relaxed);
                    let _ = net::sockopt::set_tcp_nodelay(&fd, true);
                    let key = conns.insert(Conn {
                        fd,
                        partial: Vec::new(),
                        pending: VecDeque::new(),
                    });
                    let flags = epoll::EventFlags::IN
                        | epoll::EventFlags::OUT
                        | epoll::EventFlags::RDHUP
                        | epoll::EventFlags::ET;
                    epoll::add(
                        &epoll,
                        &conns.get(key).expect("just inserted").fd,
                        epoll::EventData::new_u64(key as u64),
                        flags,
                    )?;
                }
                continue;
            }
            let key = token as usize;
            let Some(conn) = conns.get_mut(key) else {
                continue;
            };
            if !drive(conn, &mut buf, responses) {
                conns.remove(key);
                loads[id].fetch_sub(1, Ordering::Relaxed);
            }
        }
    }
}

/// Reads, answers and writes until the socket would block; false to close.
fn drive(conn: &mut Conn, buf: &mut [u8], responses: &Responses) -> bool {
    if !flush(conn, responses) {
        return false;
    }
    loop {
        if !conn.pending.is_empty() {
            return true;
        }
        // recv rather than read: the socket path skips the VFS layer.
        let n = match rustix::net::recv(&conn.fd, &mut *buf, rustix::net::RecvFlags::empty()) {
            Ok((0, _)) => return false,
            Ok((n, _)) => n,
            Err(Errno::AGAIN) => return true,
            Err(Errno::INTR) => continue,
            Err(_) => return false,
        };
        let data: Vec<u8>;
        let input: &[u8] = if conn.partial.is_empty() {
            &buf[..n]
        } else {
            conn.partial.extend_from_slice(&buf[..n]);
            data = std::mem::take(&mut conn.partial);
            &data
        };
        let mut start = 0;
        while let Some(end) = find_head_end(&input[start..]) {
            let head = &input[start..start + end];
            conn.pending.push_back((route(head, responses), 0));
            start += end;
        }
        conn.partial = input[start..].to_vec();
        if !flush(conn, responses) {
            return false;
        }
        if n < buf.len() {
            return true;
        }
    }
}

fn route(head: &[u8], responses: &Responses) -> usize {
    let path = head.split(|&b| b == b' ').nth(1).unwrap_or(b"");
    let path = path.split(|&b| b == b'?').next().unwrap_or(b"");
    responses
        .by_path
        .get(path)
        .copied()
        .unwrap_or(responses.not_found)
}

fn find_head_end(data: &[u8]) -> Option<usize> {
    data.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4)
}

fn flush(conn: &mut Conn, responses: &Responses) -> bool {
    while !conn.pending.is_empty() {
        let mut slices: [IoSlice<'_>; 32] = std::array::from_fn(|_| IoSlice::new(&[]));
        let mut count = 0;
        for (slot, (id, off)) in slices.iter_mut().zip(conn.pending.iter()) {
            *slot = IoSlice::new(&responses.bodies[*id][*off..]);
            count += 1;
        }
        let result = if count == 1 {
            rustix::net::send(&conn.fd, &slices[0], rustix::net::SendFlags::NOSIGNAL)
        } else {
            rustix::io::writev(&conn.fd, &slices[..count])
        };
        let written = match result {
            Ok(n) => n,
            Err(Errno::AGAIN) => return true,
            Err(Errno::INTR) => continue,
            Err(_) => return false,
        };
        let mut left = written;
        while left > 0 {
            let (id, offset) = conn
                .pending
                .front_mut()
                .expect("written bytes belong to a pending response");
            let remaining = responses.bodies[*id].len() - *offset;
            if left >= remaining {
                left -= remaining;
                conn.pending.pop_front();
            } else {
                *offset += left;
                left = 0;
            }
        }
    }
    true
}

/// A minimal slab: the floor keeps its own dependencies to the bare minimum.
mod slab_lite {
    pub struct Slab<T> {
        items: Vec<Option<T>>,
        free: Vec<usize>,
    }

    impl<T> Default for Slab<T> {
        fn default() -> Self {
            Slab {
                items: Vec::new(),
                free: Vec::new(),
            }
        }
    }

    impl<T> Slab<T> {
        pub fn insert(&mut self, item: T) -> usize {
            match self.free.pop() {
                Some(i) => {
                    self.items[i] = Some(item);
                    i
                }
                None => {
                    self.items.push(Some(item));
                    self.items.len() - 1
                }
            }
        }

        pub fn get(&self, i: usize) -> Option<&T> {
            self.items.get(i)?.as_ref()
        }

        pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
            self.items.get_mut(i)?.as_mut()
        }

        pub fn remove(&mut self, i: usize) {
            if self.items.get_mut(i).and_then(Option::take).is_some() {
                self.free.push(i);
            }
        }
    }
}
