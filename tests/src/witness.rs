//! Local witnesses for the black-box tests that need them (and only
//! those): `scripts/witnesses.sh`, the script `scripts/dev.sh` uses, with
//! their state inside the test server's own state directory. Each witness
//! runs in its own process group, stopped when the test binary exits
//! (the same pipe as [`crate::Wrangler`]), so a test can stop and resume
//! one witness at a time.
//!
//! ```ignore
//! let dir = fresh_state_dir("witnessed");
//! let witnesses = Witnesses::start(&dir, 3, 2);
//! let server = Wrangler::start_with_vars(&dir, &witnesses.vars());
//! ```

use crate::repo_root;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a witness may take to answer `/healthz`.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// The wrangler vars that carry the witness policy (C2SP tlog-policy
/// text) to the service, per environment.
pub const POLICY_VARS: [&str; 2] = ["WITNESS_POLICY_SANDBOX", "WITNESS_POLICY_PRODUCTION"];

struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
}

/// Running local witnesses (aics-witness) of one state directory.
pub struct Witnesses {
    persist_dir: PathBuf,
    ports: Vec<u16>,
    policy: String,
    running: Vec<Option<Running>>,
}

fn script(args: &[&str]) -> Command {
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/witnesses.sh"))
        .args(args)
        .current_dir(repo_root());
    cmd
}

impl Witnesses {
    /// `count` witnesses with a quorum of `quorum`, trusting the logs of
    /// wrangler.toml's shards, their state in `persist_dir/witnesses`.
    pub fn start(persist_dir: &Path, count: usize, quorum: usize) -> Witnesses {
        let dir = persist_dir.display().to_string();
        crate::run_ok(
            script(&[
                "init",
                "--persist-to",
                &dir,
                "--count",
                &count.to_string(),
                "--quorum",
                &quorum.to_string(),
            ])
            .stdout(Stdio::piped()),
            "scripts/witnesses.sh init",
        );
        let base = persist_dir.join("witnesses");
        let ports = std::fs::read_to_string(base.join("ports"))
            .expect("witnesses/ports")
            .split_whitespace()
            .map(|p| p.parse().expect("a port"))
            .collect();
        let policy = std::fs::read_to_string(base.join("policy.txt")).expect("policy.txt");
        let mut w = Witnesses {
            persist_dir: persist_dir.to_path_buf(),
            ports,
            policy,
            running: (0..count).map(|_| None).collect(),
        };
        for i in 1..=count {
            w.resume(i);
        }
        w
    }

    /// The policy the service is configured with: witness lines with
    /// their URLs, the group and the quorum (C2SP tlog-policy).
    pub fn policy(&self) -> &str {
        &self.policy
    }

    /// `--var` pairs for [`crate::Wrangler`]: the policy for both
    /// environments.
    pub fn vars(&self) -> Vec<(&'static str, &str)> {
        POLICY_VARS
            .iter()
            .map(|v| (*v, self.policy.as_str()))
            .collect()
    }

    /// Witness `i`'s (1-based) submission prefix.
    pub fn url(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}", self.ports[i - 1])
    }

    /// Stops witness `i` (1-based); its state stays.
    pub fn stop(&mut self, i: usize) {
        if let Some(mut r) = self.running[i - 1].take() {
            if let Some(mut stdin) = r.stdin.take() {
                let _ = stdin.write_all(b"stop\n");
            }
            let _ = r.child.wait();
        }
        let addr = format!("127.0.0.1:{}", self.ports[i - 1]);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && std::net::TcpStream::connect(&addr).is_ok() {
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Starts witness `i` (1-based) again, on its port, from its state.
    pub fn resume(&mut self, i: usize) {
        if self.running[i - 1].is_some() {
            return;
        }
        let cmd = format!(
            r#"trap 'kill -TERM -- -$$ 2>/dev/null' EXIT
bash scripts/witnesses.sh serve --persist-to '{dir}' --only {i} > '{dir}/witnesses/w{i}/supervisor.log' 2>&1 &
read -r _ || true"#,
            dir = self.persist_dir.display(),
        );
        let mut child = Command::new("setsid")
            .arg("bash")
            .arg("-c")
            .arg(cmd)
            .current_dir(repo_root())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn scripts/witnesses.sh serve");
        let stdin = child.stdin.take();
        self.running[i - 1] = Some(Running { child, stdin });
        let health = format!("{}/healthz", self.url(i));
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(2))
            .build()
            .expect("http client");
        let deadline = Instant::now() + READY_TIMEOUT;
        while Instant::now() < deadline {
            if client
                .get(&health)
                .send()
                .is_ok_and(|r| r.status().is_success())
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let log = std::fs::read_to_string(
            self.persist_dir
                .join(format!("witnesses/w{i}/supervisor.log")),
        )
        .unwrap_or_default();
        panic!("witness {i} did not start:\n{log}");
    }

    /// Trusts the logs of `sandbox` and `production` shards and reloads
    /// the running witnesses (SIGHUP), as when a shard is added.
    pub fn add_shards(&self, sandbox: u32, production: u32) {
        crate::run_ok(
            &mut script(&[
                "add-logs",
                "--persist-to",
                &self.persist_dir.display().to_string(),
                "--shards-sandbox",
                &sandbox.to_string(),
                "--shards-production",
                &production.to_string(),
            ]),
            "scripts/witnesses.sh add-logs",
        );
    }
}

impl Drop for Witnesses {
    fn drop(&mut self) {
        for i in 1..=self.running.len() {
            self.stop(i);
        }
    }
}
