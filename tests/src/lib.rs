//! Black-box test harness: starts a real `wrangler dev` (workerd with local
//! D1, Queues and cron) on a free loopback port with a fresh persist
//! directory, and stops its whole process group when the test binary exits,
//! however it exits.
//!
//! The process tree is `setsid bash -c '<wrangler dev> & read'`: bash leads a
//! new process group and blocks reading a pipe whose write end this process
//! holds. When this process ends (normally, by panic or by signal) the pipe
//! closes, `read` returns, and bash's EXIT trap sends SIGTERM to the group.
//!
//! The test files share one client kit instead of copying helpers:
//! [`client`] (`Api`, and `Keyed` for `X-API-Key` routes), [`ledger`]
//! (one helper per balance/facts endpoint, `Delta` bodies with exact
//! amounts, the waits for anchoring, checkpoints and facts), [`log`]
//! (verifier key, hash lists, inclusion, consistency and receipt checks
//! with `core`), [`cron`] (the scheduled route), [`tenant`] (sign-up, keys,
//! plans, webhooks with a JWT), [`jwt`] (hand-made tokens) and
//! [`receiver`] (a webhook receiver) and [`trips`] (storage round trips
//! per request from the DEV_MODE log line, and the hot-route sample), and
//! [`witness`] (local C2SP witnesses, for the tests that need them).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub mod bench;
pub mod client;
pub mod cron;
pub mod docs;
pub mod jwt;
pub mod ledger;
pub mod log;
pub mod receiver;
pub mod tenant;
pub mod trips;
pub mod witness;

pub use client::api;

/// How long a fresh `wrangler dev` may take to answer `/health`.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(180);
/// What wrangler's log says when a port it was given is taken.
const PORT_TAKEN: &str = "Address already in use";
/// Launches of one server at most, when ports are lost to a race.
const PORT_RACE_ATTEMPTS: u32 = 3;
/// Launches of one server at most, when one never answers `/health`:
/// wrangler's proxy can come up and hold every request while the Worker's
/// runtime never reports ready (seen once in CI on a loaded 2-core
/// machine, with nothing in wrangler's log). A second launch on the same
/// state starts the same Worker again; a Worker that cannot start fails
/// both.
const HUNG_START_ATTEMPTS: u32 = 2;

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// A running `wrangler dev`.
pub struct Wrangler {
    pub base_url: String,
    pub persist_dir: PathBuf,
    pub log_path: PathBuf,
    /// Its own dev registry (see [`Wrangler::spawn`]).
    pub registry_dir: PathBuf,
    /// The V8 inspector of its Worker isolate (`bench/worker-profile.mjs`).
    pub inspector_port: u16,
    child: Child,
    stdin: Option<ChildStdin>,
}

/// Why a launch did not become healthy, with wrangler's log so far.
enum StartFailure {
    /// A port it was given was taken before it bound it.
    PortTaken(String),
    /// It never answered `/health` in [`STARTUP_TIMEOUT`].
    NoAnswer(String),
}

/// One ledger shard per environment: see [`Wrangler::start`].
const ONE_SHARD: &[(&str, &str)] = &[
    ("LEDGER_SHARDS_SANDBOX", "1"),
    ("LEDGER_SHARDS_PRODUCTION", "1"),
];

impl Wrangler {
    /// Starts on `persist_dir`, applying migrations first (idempotent),
    /// with one ledger shard per environment: every tenant on shard 0, the
    /// layout the tests written before sharding address by the log names
    /// `sandbox` and `production` (their logs are shard 0's). Every shard
    /// database is still migrated.
    pub fn start(persist_dir: &Path) -> Wrangler {
        Self::start_with(persist_dir, ONE_SHARD)
    }

    /// Starts like [`Wrangler::start`] (one shard per environment) with
    /// extra vars (`--var NAME:VALUE`), for a test binary that needs a
    /// DEV_MODE knob of its own.
    pub fn start_with_vars(persist_dir: &Path, vars: &[(&str, &str)]) -> Wrangler {
        let mut all = ONE_SHARD.to_vec();
        all.extend_from_slice(vars);
        Self::start_with(persist_dir, &all)
    }

    /// Starts with wrangler.toml's shards (2 per environment): tenants are
    /// placed on the emptiest shard (tests/tests/shards.rs).
    pub fn start_sharded(persist_dir: &Path) -> Wrangler {
        Self::start_with(persist_dir, &[])
    }

    /// Starts with `vars` (`--var NAME:VALUE`) over wrangler.toml's.
    pub fn start_with(persist_dir: &Path, vars: &[(&str, &str)]) -> Wrangler {
        migrate(persist_dir);
        Self::launch(persist_dir, vars, None)
    }

    /// Starts like [`Wrangler::start_with_vars`] (one shard per
    /// environment), serving the Worker built at `script` (a copy of
    /// `worker/build/index.js` with its files) instead of this checkout's:
    /// a benchmark compares two builds side by side (bench/README.md).
    pub fn start_script(persist_dir: &Path, vars: &[(&str, &str)], script: &Path) -> Wrangler {
        let mut all = ONE_SHARD.to_vec();
        all.extend_from_slice(vars);
        migrate(persist_dir);
        Self::launch(persist_dir, &all, Some(script))
    }

    /// Starts again, with wrangler.toml's shards, on a state directory
    /// already migrated (after [`Wrangler::kill_hard`]).
    pub fn restart_sharded(persist_dir: &Path) -> Wrangler {
        Self::launch(persist_dir, &[], None)
    }

    /// Starts again with `vars` on a state directory already migrated
    /// (after [`Wrangler::kill_hard`]).
    pub fn restart_with(persist_dir: &Path, vars: &[(&str, &str)]) -> Wrangler {
        Self::launch(persist_dir, vars, None)
    }

    /// Kills the whole process group with SIGKILL, as a crash would: no
    /// shutdown, nothing flushed. The state directory stays for a restart.
    pub fn kill_hard(mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        self.stdin = None;
        self.shutdown();
    }

    /// Launches `wrangler dev` and waits for it; again on fresh ports (up
    /// to [`PORT_RACE_ATTEMPTS`] in all) when a port it was given was taken
    /// before it bound it (`free_port` can only say a port was free), and
    /// once more ([`HUNG_START_ATTEMPTS`]) when it never answered, with
    /// the hung launch's log on stderr.
    fn launch(persist_dir: &Path, vars: &[(&str, &str)], script: Option<&Path>) -> Wrangler {
        let (mut races, mut hangs) = (1, 1);
        loop {
            let w = Self::spawn(persist_dir, vars, script);
            match w.wait_healthy() {
                Ok(()) => return w,
                Err(StartFailure::PortTaken(_)) if races < PORT_RACE_ATTEMPTS => {
                    eprintln!("wrangler dev lost a port race (attempt {races}); again");
                    w.kill();
                    races += 1;
                }
                Err(StartFailure::NoAnswer(log)) if hangs < HUNG_START_ATTEMPTS => {
                    eprintln!(
                        "wrangler dev did not answer /health in {STARTUP_TIMEOUT:?} \
                         (launch {hangs}); again. Its log:\n{log}"
                    );
                    w.kill();
                    hangs += 1;
                }
                Err(StartFailure::PortTaken(log) | StartFailure::NoAnswer(log)) => {
                    panic!("wrangler dev did not become healthy in time; log:\n{log}")
                }
            }
        }
    }

    fn spawn(persist_dir: &Path, vars: &[(&str, &str)], script: Option<&Path>) -> Wrangler {
        let root = repo_root();
        // The benchmarks' deployed shape (issue 42, bench/README.md
        // "deployed shape"): `BVS_DEPLOYED_LATENCY_MS=5 bash bench/...`
        // adds that latency to every crossing of every server started.
        let shape = std::env::var("BVS_DEPLOYED_LATENCY_MS").ok();
        let mut vars = vars.to_vec();
        if let Some(ms) = shape.as_deref() {
            if !vars.iter().any(|(k, _)| *k == "DEPLOYED_LATENCY_MS") {
                vars.push(("DEPLOYED_LATENCY_MS", ms));
            }
        }
        let vars = vars.as_slice();

        let port = free_port();
        let inspector = free_port();
        let log_path = persist_dir.join(format!("wrangler-{port}.log"));
        let registry_dir = persist_dir.join(format!("dev-registry-{port}"));
        let script = format!(
            r#"source scripts/env.sh
trap 'kill -TERM -- -$$ 2>/dev/null' EXIT
wrangler dev{script} --ip 127.0.0.1 --port {port} --inspector-port {inspector} \
  --persist-to '{persist}' --show-interactive-dev-session=false --log-level log{vars} \
  > '{log}' 2>&1 &
read -r _ || true"#,
            persist = persist_dir.display(),
            log = log_path.display(),
            script = script.map_or(String::new(), |p| format!(" '{}'", p.display())),
            vars = vars
                .iter()
                .map(|(k, v)| format!(" --var '{k}:{v}'"))
                .collect::<String>(),
        );
        let mut child = Command::new("setsid")
            .arg("bash")
            .arg("-c")
            .arg(script)
            // Its own dev registry: by default every `wrangler dev` on the
            // machine registers in, and watches, one shared directory, so
            // each start or stop of any test's server wakes all the others.
            // Test servers bind nothing of each other.
            .env("WRANGLER_REGISTRY_PATH", &registry_dir)
            .current_dir(&root)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn wrangler dev");
        let stdin = child.stdin.take();
        Wrangler {
            base_url: format!("http://127.0.0.1:{port}"),
            persist_dir: persist_dir.to_path_buf(),
            log_path,
            registry_dir,
            inspector_port: inspector,
            child,
            stdin,
        }
    }

    /// Waits for `/health`; why not, with the log so far, when it does not
    /// answer in [`STARTUP_TIMEOUT`], or as soon as the log says a port
    /// was taken.
    fn wait_healthy(&self) -> Result<(), StartFailure> {
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .unwrap();
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(r) = client.get(format!("{}/health", self.base_url)).send() {
                if r.status().is_success() {
                    return Ok(());
                }
            }
            let log = std::fs::read_to_string(&self.log_path).unwrap_or_default();
            if log.contains(PORT_TAKEN) {
                return Err(StartFailure::PortTaken(log));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        Err(StartFailure::NoAnswer(
            std::fs::read_to_string(&self.log_path).unwrap_or_default(),
        ))
    }

    /// The process group of this server (`setsid` made the top bash its
    /// leader): wrangler's node process and both workerd processes, for a
    /// benchmark that reads their CPU time.
    pub fn process_group(&self) -> u32 {
        self.child.id()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }

    /// Stops the whole process group and waits for it: SIGTERM, never
    /// SIGKILL of the top pid alone.
    pub fn stop(mut self) {
        self.shutdown();
    }

    /// Kills the whole process group at once (SIGKILL): a crash, with no
    /// chance to finish in-flight requests. `setsid` made the top bash the
    /// group leader, so its pid is the group id.
    pub fn kill(mut self) {
        let _ = Command::new("kill")
            .arg("-KILL")
            .arg("--")
            .arg(format!("-{}", self.child.id()))
            .status();
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"stop\n");
        }
        let _ = self.child.wait();
        // Give workerd a moment to release the port and the SQLite files.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline
            && std::net::TcpStream::connect(self.base_url.trim_start_matches("http://")).is_ok()
        {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Wrangler {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Applies the migrations to `persist_dir` (idempotent).
fn migrate(persist_dir: &Path) {
    let root = repo_root();
    std::fs::create_dir_all(persist_dir).unwrap();
    let status = Command::new("bash")
        .arg(root.join("scripts/migrate.sh"))
        .arg(persist_dir)
        .current_dir(&root)
        .stdout(Stdio::null())
        .status()
        .expect("run scripts/migrate.sh");
    assert!(status.success(), "migrations failed");
}

/// Where servers keep their state: `$BVS_TEST_STATE`, else
/// `target/test-state`.
pub fn state_base() -> PathBuf {
    std::env::var_os("BVS_TEST_STATE")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/test-state"))
}

/// Nanoseconds since the Unix epoch: a suffix that keeps names unique.
pub fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// A fresh, unique directory for one server's state.
pub fn fresh_state_dir(label: &str) -> PathBuf {
    let dir = state_base().join(format!("{label}-{}-{}", std::process::id(), nanos()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Declares a test binary's own `wrangler dev` (`server()`, started on
/// first use in a fresh state directory named `label`) and a client of
/// it (`api()`), for binaries whose rate-limit buckets or cron runs must
/// not be shared.
#[macro_export]
macro_rules! own_server {
    ($label:literal) => {
        static SERVER: std::sync::OnceLock<$crate::Wrangler> = std::sync::OnceLock::new();

        #[allow(dead_code)]
        fn server() -> &'static $crate::Wrangler {
            SERVER.get_or_init(|| $crate::Wrangler::start(&$crate::fresh_state_dir($label)))
        }

        #[allow(dead_code)]
        fn api() -> $crate::client::Api {
            $crate::client::Api::new(server().base_url.clone())
        }
    };
}

static SHARED: OnceLock<Mutex<Option<Wrangler>>> = OnceLock::new();

/// The one `wrangler dev` this test binary shares; tests isolate by tenant.
/// Its process group is stopped when the binary exits (see module docs).
pub fn shared() -> String {
    let cell = SHARED.get_or_init(|| Mutex::new(None));
    let mut guard = cell.lock().unwrap_or_else(|p| p.into_inner());
    if guard.is_none() {
        *guard = Some(Wrangler::start(&fresh_state_dir("shared")));
    }
    guard.as_ref().unwrap().base_url.clone()
}

/// A value from `.dev.vars` (written by scripts/setup.sh).
pub fn dev_var(name: &str) -> String {
    let text = std::fs::read_to_string(repo_root().join(".dev.vars")).expect(".dev.vars exists");
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|| panic!("{name} missing from .dev.vars"))
}

/// Runs `cmd` to its end and returns its stdout; panics with `failure`,
/// the exit status and both outputs unless it succeeds.
pub fn run_ok(cmd: &mut Command, failure: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{failure}: cannot run {cmd:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{failure} ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    stdout
}

/// A browser test, `node tests/browser/<script> <args...>`, run from the
/// repository root with the project's pinned Node when it is installed:
/// its stdout, printed too; panics with both streams when it fails.
pub fn run_browser<S: AsRef<std::ffi::OsStr>>(script: &str, args: &[S]) -> String {
    let root = repo_root();
    let node = root.join("node_modules/.bin/node");
    let stdout = run_ok(
        Command::new(if node.exists() { node } else { "node".into() })
            .arg(root.join("tests/browser").join(script))
            .args(args)
            .current_dir(&root),
        &format!("browser test {script} failed"),
    );
    println!("{stdout}");
    stdout
}

/// The auditors' CLI `bvs-verify`, built (debug) on first use: its path.
pub fn bvs_verify_bin() -> PathBuf {
    let root = repo_root();
    run_ok(
        Command::new("cargo")
            .args(["build", "--quiet", "-p", "bvs-verify"])
            .current_dir(&root),
        "cargo build -p bvs-verify",
    );
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("debug/bvs-verify")
}

/// `bvs-verify <command> <file> --key <key>` over `text` saved to a fresh
/// state directory named `name`: whether it passed, and what it printed.
pub fn bvs_verify_saved(command: &str, text: &str, name: &str, key: &str) -> (bool, String) {
    let saved = fresh_state_dir(name).join("document.json");
    std::fs::write(&saved, text).expect("save the document");
    let out = Command::new(bvs_verify_bin())
        .args([command, saved.to_str().unwrap_or_default(), "--key", key])
        .output()
        .expect("run bvs-verify");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
    )
}

/// Polls `f` until it returns `Some`, or panics after `timeout`.
pub fn eventually<T>(timeout: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The repository root, once the browser's WebAssembly verifier is built
/// there (`public/pkg`); panics saying how to build it.
pub fn verifier_built() -> PathBuf {
    let root = repo_root();
    assert!(
        root.join("public/pkg/bvs_verifier_wasm_bg.wasm").exists(),
        "public/pkg is missing: run scripts/build-verifier.sh (scripts/setup.sh does)"
    );
    root
}
