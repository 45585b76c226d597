//! An in-process HTTP server that can really go down: stopping it closes
//! its listener and every open connection (kept-alive ones too), so a
//! client sees refused and reset connections, as from a dead process; and
//! it can come back on the same port.

use axum::Router;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;

/// A server on a loopback port, stoppable and restartable.
pub struct Stoppable {
    addr: SocketAddr,
    task: Option<tokio::task::JoinHandle<()>>,
}

fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(64)
}

/// Accepts connections for `app`; every connection task lives in one
/// `JoinSet`, so aborting this task aborts them all.
async fn accept(listener: tokio::net::TcpListener, app: Router) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let service = TowerToHyperService::new(app.clone());
        connections.spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
        while connections.try_join_next().is_some() {}
    }
}

impl Stoppable {
    /// Serves `app` on a free loopback port.
    pub fn start(app: Router) -> Stoppable {
        let listener = bind("127.0.0.1:0".parse().expect("an address")).expect("a loopback port");
        let addr = listener.local_addr().expect("bound");
        Stoppable {
            addr,
            task: Some(tokio::spawn(accept(listener, app))),
        }
    }

    /// `http://<addr>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Closes the listener and every connection.
    pub fn stop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }

    /// Serves `app` again on the same port (after stopping, if running).
    pub async fn restart(&mut self, app: Router) {
        self.stop();
        let listener = loop {
            match bind(self.addr) {
                Ok(listener) => break listener,
                Err(_) => tokio::task::yield_now().await,
            }
        };
        self.task = Some(tokio::spawn(accept(listener, app)));
    }
}

impl Drop for Stoppable {
    fn drop(&mut self) {
        self.stop();
    }
}
