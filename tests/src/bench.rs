//! Shared by the benchmark binaries (src/bin/bench-*.rs, not tests):
//! closed-loop rounds of requests with their rate, median latency and the
//! server's CPU time per request, read from `/proc` for the `wrangler dev`
//! process group ([`crate::Wrangler::process_group`]).
#![allow(clippy::cast_precision_loss)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Closed-loop clients per round.
pub const CONNECTIONS: usize = 8;
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// CPU time (ms) used so far, by role: the workerd that runs the Worker
/// (and, in the same process, D1, the queues and the Durable Objects),
/// wrangler's entry workerd on the public port (its proxy), wrangler's
/// node processes, and this client.
#[derive(Clone, Copy, Default)]
pub struct Cpu {
    pub worker: f64,
    pub entry: f64,
    pub node: f64,
    pub client: f64,
}

/// Linux reports `utime` and `stime` in USER_HZ ticks, 100 a second.
const TICK_MS: f64 = 10.0;

/// utime + stime of `/proc/<pid>/stat`, and its process group.
fn stat_ms(pid: &str) -> Option<(u32, f64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command's closing parenthesis: state is field 3.
    let rest: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    let pgrp = rest.get(2)?.parse().ok()?;
    let utime: f64 = rest.get(11)?.parse().ok()?;
    let stime: f64 = rest.get(12)?.parse().ok()?;
    Some((pgrp, (utime + stime) * TICK_MS))
}

impl Cpu {
    pub fn now(group: u32, port: &str) -> Cpu {
        let mut cpu = Cpu::default();
        let entry = format!("entry=127.0.0.1:{port}");
        for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let pid = e.file_name().to_string_lossy().to_string();
            let Some((pgrp, ms)) = stat_ms(&pid) else {
                continue;
            };
            if pgrp != group {
                continue;
            }
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd);
            if !cmd.contains("workerd") {
                cpu.node += ms;
            } else if cmd.contains(&entry) {
                cpu.entry += ms;
            } else {
                cpu.worker += ms;
            }
        }
        cpu.client = stat_ms("self").map_or(0.0, |(_, ms)| ms);
        cpu
    }

    /// CPU ms per request between `before` and `self` for `n` requests.
    pub fn per(self, before: Cpu, n: f64) -> Cpu {
        let n = n.max(1.0);
        Cpu {
            worker: (self.worker - before.worker) / n,
            entry: (self.entry - before.entry) / n,
            node: (self.node - before.node) / n,
            client: (self.client - before.client) / n,
        }
    }
}

/// What the server is, for [`Cpu::now`].
pub struct Server {
    pub group: u32,
    pub port: String,
}

impl Server {
    /// The server `w` (its process group and public port).
    pub fn of(w: &crate::Wrangler) -> Server {
        Server {
            group: w.process_group(),
            port: w
                .base_url
                .rsplit(':')
                .next()
                .unwrap_or_default()
                .to_string(),
        }
    }
}

/// One round's requests/s, p50 latency (ms) and CPU ms per request.
pub struct Round {
    pub rps: f64,
    pub p50: f64,
    pub cpu: Cpu,
}

/// Runs `f` for `secs` by CONNECTIONS closed-loop clients; `f(i)` gets a
/// number unique in the whole run.
pub fn round(server: &Server, secs: u64, next: &AtomicUsize, f: &(impl Fn(usize) + Sync)) -> Round {
    let lat = Mutex::new(Vec::new());
    let cpu_before = Cpu::now(server.group, &server.port);
    let start = Instant::now();
    let end = start + Duration::from_secs(secs);
    std::thread::scope(|s| {
        for _ in 0..CONNECTIONS {
            s.spawn(|| {
                let mut mine = Vec::new();
                while Instant::now() < end {
                    let t = Instant::now();
                    f(next.fetch_add(1, Ordering::Relaxed));
                    mine.push(t.elapsed().as_secs_f64() * 1000.0);
                }
                lat.lock().unwrap().extend(mine);
            });
        }
    });
    let elapsed = start.elapsed().as_secs_f64();
    let mut lat = lat.into_inner().unwrap();
    let n = lat.len() as f64;
    Round {
        rps: n / elapsed,
        p50: median(&mut lat),
        cpu: Cpu::now(server.group, &server.port).per(cpu_before, n),
    }
}

/// Waits (at most a minute) until the Worker's workerd is idle: under
/// 50 ms of CPU in half a second, so the queue a round left behind does
/// not run into the next round (BENCH_SETTLE=1).
pub fn settle(server: &Server) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let before = Cpu::now(server.group, &server.port);
        std::thread::sleep(Duration::from_millis(500));
        if Cpu::now(server.group, &server.port).worker - before.worker < 50.0 {
            return;
        }
    }
}
