//! A real HTTP receiver for webhook tests: listens on 127.0.0.1 on a free
//! port, records every request, and answers with scripted statuses (200
//! once the script is spent). A scripted `HANG` answers nothing for
//! `HANG_FOR`, then closes the connection: a time-out for the sender.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The status this request was answered with.
    pub answered: u16,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// Checks `X-Service-Signature` against an HMAC-SHA256 of the exact
    /// body bytes computed here, independently of the service.
    pub fn signature_is_valid(&self, secret: &str) -> bool {
        let Some(sig) = self.header("x-service-signature") else {
            return false;
        };
        let Some(hex_tag) = sig.strip_prefix("sha256=") else {
            return false;
        };
        let Ok(tag) = hex::decode(hex_tag) else {
            return false;
        };
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
            return false;
        };
        mac.update(&self.body);
        mac.verify_slice(&tag).is_ok()
    }
}

/// Script entry: never answer (the sender times out).
pub const HANG: u16 = 0;
/// How long a `HANG` keeps the connection open without answering.
pub const HANG_FOR: Duration = Duration::from_secs(15);

#[derive(Default)]
struct State {
    script: VecDeque<u16>,
    received: Vec<Received>,
}

/// The receiver; its thread lives as long as the test binary.
#[derive(Clone)]
pub struct Receiver {
    pub port: u16,
    state: Arc<Mutex<State>>,
}

impl Receiver {
    /// Starts a receiver answering `script` in order, then 200.
    pub fn start(script: &[u16]) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
        let port = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("local addr: {e}"))
            .port();
        let state = Arc::new(Mutex::new(State {
            script: script.iter().copied().collect(),
            received: Vec::new(),
        }));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || serve(stream, &shared));
            }
        });
        Receiver { port, state }
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn received(&self) -> Vec<Received> {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .received
            .clone()
    }

    /// Waits until at least `n` requests arrived; panics after `timeout`.
    pub fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Received> {
        let deadline = Instant::now() + timeout;
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "receiver got {} of {n} requests in {timeout:?}: {got:?}",
                got.len()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn serve(stream: TcpStream, state: &Mutex<State>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 {
            break;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let len = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let answered = {
        let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
        let status = s.script.pop_front().unwrap_or(200);
        s.received.push(Received {
            method,
            path,
            headers,
            body,
            answered: status,
        });
        status
    };
    if answered == HANG {
        std::thread::sleep(HANG_FOR);
        return;
    }
    let mut stream = stream;
    let text = "{\"ok\":true}";
    let _ = write!(
        stream,
        "HTTP/1.1 {answered} Scripted\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = stream.flush();
}

/// Waits for the first webhook named `name` that `rx` receives, running
/// the sweep cron now and then (so a dispatch a lost doorbell left behind
/// still goes out).
pub fn wait_event(api: &crate::client::Api, rx: &Receiver, name: &str) -> Received {
    let mut polls = 0u32;
    crate::eventually(crate::ledger::WAIT, name, || {
        polls += 1;
        if polls.is_multiple_of(15) {
            crate::cron::sweep(api, crate::cron::now_ms());
        }
        rx.received()
            .into_iter()
            .find(|r| r.json()["event"] == name)
    })
}
