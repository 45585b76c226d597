//! A private `redis-server` for one test: a free loopback port, no
//! persistence, its own working directory, killed when dropped.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};

/// A running `redis-server` that belongs to one test.
#[derive(Debug)]
pub struct RedisServer {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

/// Why the server could not start.
#[derive(Debug)]
pub struct StartError(pub String);

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartError {}

impl RedisServer {
    /// Starts a server and returns once it accepts connections (it says so
    /// on its log). A port taken between choosing and binding is retried.
    pub fn start() -> Result<RedisServer, StartError> {
        let mut last_error = String::new();
        for _ in 0..5 {
            match Self::start_once() {
                Ok(server) => return Ok(server),
                Err(error) => last_error = error.0,
            }
        }
        Err(StartError(last_error))
    }

    fn start_once() -> Result<RedisServer, StartError> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| StartError(format!("no free port: {e}")))?
            .port();
        let dir = tempfile::tempdir().map_err(|e| StartError(e.to_string()))?;
        let mut child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args([
                "--protected-mode",
                "no",
                "--loglevel",
                "notice",
                "--logfile",
                "",
            ])
            .arg("--dir")
            .arg(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| StartError(format!("cannot run redis-server (is it installed?): {e}")))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let ready = lines
            .by_ref()
            .map_while(Result::ok)
            .any(|line| line.contains("Ready to accept connections"));
        if !ready {
            let _ = child.kill();
            let _ = child.wait();
            return Err(StartError(format!(
                "redis-server did not start on port {port}"
            )));
        }
        // Keep draining its log so the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Ok(RedisServer {
            child,
            port,
            _dir: dir,
        })
    }

    /// The server's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:{port}/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
