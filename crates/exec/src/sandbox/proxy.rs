//! The egress proxy of a task whose network is a host list: HTTP `CONNECT` (for HTTPS and any
//! other TCP protocol) and plain HTTP requests in absolute form, on 127.0.0.1 at a random port.
//! Only hosts the spec lists are reached; every attempt, allowed or not, is reported. It runs
//! on threads of its own: one accepts, one serves each connection (and one more relays the
//! client's side of a tunnel).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use super::hosts::{HostPattern, allowed};
use crate::cancel::{Cancel, FALLBACK_TICK, wait_readable};

/// Where the proxy reports each connection attempt (runner: its task's network tally and
/// transcript). Called from the proxy's threads.
pub type AttemptSink = Arc<dyn Fn(NetworkAttempt) + Send + Sync>;

/// Why the proxy answers a request 400 (also the attempt's recorded error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
struct BadRequest(String);

impl From<String> for BadRequest {
    fn from(s: String) -> Self {
        BadRequest(s)
    }
}

impl From<&str> for BadRequest {
    fn from(s: &str) -> Self {
        BadRequest(s.to_string())
    }
}

/// Largest request head the proxy reads before deciding.
const MAX_HEAD: usize = 16 * 1024;

/// One connection attempt through the proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkAttempt {
    /// The host asked for (a name or an IP literal).
    pub host: String,
    /// The port asked for.
    pub port: u16,
    /// `CONNECT`, or the method of a plain HTTP request.
    pub method: String,
    /// Whether the host is allowed.
    pub allowed: bool,
    /// Why it did not go through, when it did not (not allowed, unreachable, malformed).
    pub error: Option<String>,
}

/// A running proxy; stops accepting when dropped (connections already accepted are served to
/// their end).
pub(crate) struct Proxy {
    port: u16,
    stop: Cancel,
    accepting: Option<JoinHandle<()>>,
}

impl Proxy {
    /// Listen on 127.0.0.1 at a random port and serve until dropped.
    pub(crate) fn start(hosts: Vec<HostPattern>, report: AttemptSink) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let hosts = Arc::new(hosts);
        let stop = Cancel::new();
        let stopped = stop.clone();
        let accepting = std::thread::Builder::new()
            .name("runner-proxy".into())
            .spawn(move || accept_loop(&listener, &hosts, &report, &stopped))?;
        Ok(Proxy {
            port,
            stop,
            accepting: Some(accepting),
        })
    }

    /// The port it listens on (127.0.0.1).
    pub(crate) fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(t) = self.accepting.take() {
            let _ = t.join();
        }
    }
}

/// Accept connections until `stop` is set, serving each on a thread of its own.
fn accept_loop(
    listener: &TcpListener,
    hosts: &Arc<Vec<HostPattern>>,
    report: &AttemptSink,
    stop: &Cancel,
) {
    while !stop.is_cancelled() {
        // Without a descriptor for the stop flag, look at it every tick.
        let until = stop.fd().is_none().then(|| Instant::now() + FALLBACK_TICK);
        if wait_readable(&[Some(listener.as_fd()), stop.fd()], until).is_err() {
            std::thread::sleep(FALLBACK_TICK);
            continue;
        }
        let Ok((conn, _)) = listener.accept() else {
            continue;
        };
        let (hosts, report) = (hosts.clone(), report.clone());
        let served = std::thread::Builder::new()
            .name("runner-proxy-conn".into())
            .spawn(move || {
                // The listener is non-blocking; the connection's reads and writes block.
                if conn.set_nonblocking(false).is_err() {
                    return;
                }
                if let Some(a) = serve(conn, &hosts) {
                    if a.allowed && a.error.is_none() {
                        tracing::debug!(host = %a.host, port = a.port, "proxy: connected");
                    } else {
                        tracing::warn!(host = %a.host, port = a.port, error = a.error.as_deref().unwrap_or(""), "sandbox proxy refused a connection");
                    }
                    report(a);
                }
            });
        if let Err(e) = served {
            tracing::warn!(error = %e, "sandbox proxy: no thread to serve a connection");
        }
    }
}

/// A parsed request head: the target and, for plain HTTP, the head rewritten to origin form.
struct Target {
    method: String,
    host: String,
    port: u16,
    /// For plain HTTP: the head to send upstream (request line in origin form).
    forward: Option<Vec<u8>>,
    /// Bytes read past the head (the start of the body or of the tunnel).
    rest: Vec<u8>,
}

/// Serve one client connection; the attempt it made, if it asked for anything.
fn serve(mut conn: TcpStream, hosts: &[HostPattern]) -> Option<NetworkAttempt> {
    let target = match read_target(&mut conn) {
        Ok(Some(t)) => t,
        Ok(None) => return None,
        Err(why) => {
            let _ = respond(&mut conn, 400, &why.0);
            return Some(NetworkAttempt {
                host: String::new(),
                port: 0,
                method: String::new(),
                allowed: false,
                error: Some(why.0),
            });
        }
    };
    let mut attempt = NetworkAttempt {
        host: target.host.clone(),
        port: target.port,
        method: target.method.clone(),
        allowed: allowed(hosts, &target.host),
        error: None,
    };
    if !attempt.allowed {
        let why = format!(
            "{}:{} is not in this task's sandbox.network list",
            target.host, target.port
        );
        let _ = respond(&mut conn, 403, &why);
        attempt.error = Some(why);
        return Some(attempt);
    }
    let mut upstream = match TcpStream::connect((target.host.as_str(), target.port)) {
        Ok(s) => s,
        Err(e) => {
            let why = format!("cannot reach {}:{}: {e}", target.host, target.port);
            let _ = respond(&mut conn, 502, &why);
            attempt.error = Some(why);
            return Some(attempt);
        }
    };
    let sent = match &target.forward {
        None => conn.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n"),
        Some(head) => upstream.write_all(head),
    };
    let relayed = match sent {
        Ok(()) if target.rest.is_empty() => Ok(()),
        Ok(()) => upstream.write_all(&target.rest),
        Err(e) => Err(e),
    };
    if relayed.is_ok() {
        relay(conn, upstream);
    }
    Some(attempt)
}

/// Copy each side's bytes to the other until both have ended (each end shut down for writing
/// when its source ends), or either fails.
fn relay(client: TcpStream, upstream: TcpStream) {
    let (Ok(client_in), Ok(upstream_out)) = (client.try_clone(), upstream.try_clone()) else {
        return;
    };
    let up = std::thread::Builder::new()
        .name("runner-proxy-up".into())
        .spawn(move || copy_then_shut(client_in, upstream_out));
    copy_then_shut(upstream, client);
    if let Ok(up) = up {
        let _ = up.join();
    }
}

/// Copy `from` to `to` until `from` ends, then shut `to` down for writing; on an error, shut
/// both down entirely (which ends the other direction too).
fn copy_then_shut(mut from: TcpStream, mut to: TcpStream) {
    match std::io::copy(&mut from, &mut to) {
        Ok(_) => {
            let _ = to.shutdown(Shutdown::Write);
        }
        Err(_) => {
            let _ = from.shutdown(Shutdown::Both);
            let _ = to.shutdown(Shutdown::Both);
        }
    }
}

/// Read the request head; `Ok(None)` for a client that closed without asking anything.
fn read_target(conn: &mut TcpStream) -> Result<Option<Target>, BadRequest> {
    let mut buf = Vec::with_capacity(1024);
    let end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > MAX_HEAD {
            return Err(BadRequest(format!(
                "request head longer than {MAX_HEAD} bytes"
            )));
        }
        let mut chunk = [0u8; 2048];
        match conn.read(&mut chunk) {
            Ok(0) if buf.is_empty() => return Ok(None),
            Ok(0) => return Err("connection closed inside the request head".into()),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) => return Err(BadRequest(format!("cannot read the request: {e}"))),
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let rest = buf[end..].to_vec();
    let line = head.lines().next().unwrap_or_default();
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(BadRequest(format!("malformed request line `{line}`")));
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = split_host_port(target, None)?;
        return Ok(Some(Target {
            method: "CONNECT".into(),
            host,
            port,
            forward: None,
            rest,
        }));
    }
    let Some(after) = target.strip_prefix("http://") else {
        return Err(BadRequest(format!(
            "`{target}` is not an absolute http:// URL (use CONNECT for https)"
        )));
    };
    let (authority, path) = match after.find('/') {
        Some(i) => (&after[..i], &after[i..]),
        None => (after, "/"),
    };
    let (host, port) = split_host_port(authority, Some(80))?;
    let mut forward = format!("{method} {path} {version}\r\n").into_bytes();
    forward.extend_from_slice(
        head[line.len()..]
            .trim_start_matches(['\r', '\n'])
            .as_bytes(),
    );
    Ok(Some(Target {
        method: method.to_string(),
        host,
        port,
        forward: Some(forward),
        rest,
    }))
}

/// `host:port` (or `[v6]:port`); `default` when the port may be left out.
fn split_host_port(s: &str, default: Option<u16>) -> Result<(String, u16), BadRequest> {
    let s = s.rsplit('@').next().unwrap_or(s);
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (h, p) = rest
            .split_once(']')
            .ok_or_else(|| format!("malformed address `{s}`"))?;
        (h, p.strip_prefix(':'))
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    let port = match (port, default) {
        (Some(p), _) => p
            .parse::<u16>()
            .map_err(|_| format!("malformed port in `{s}`"))?,
        (None, Some(d)) => d,
        (None, None) => return Err(BadRequest(format!("`{s}` has no port"))),
    };
    if host.is_empty() {
        return Err(BadRequest(format!("`{s}` has no host")));
    }
    Ok((host.to_ascii_lowercase(), port))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn respond(conn: &mut TcpStream, status: u16, why: &str) -> std::io::Result<()> {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        _ => "Bad Gateway",
    };
    let body = format!("runner sandbox: {why}\n");
    let msg = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(msg.as_bytes())?;
    conn.shutdown(Shutdown::Write)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_port_forms() {
        assert_eq!(
            split_host_port("crates.io:443", None).unwrap(),
            ("crates.io".into(), 443)
        );
        assert_eq!(
            split_host_port("[::1]:8080", None).unwrap(),
            ("::1".into(), 8080)
        );
        assert_eq!(
            split_host_port("Example.COM", Some(80)).unwrap(),
            ("example.com".into(), 80)
        );
        assert_eq!(
            split_host_port("user:pw@host:81", None).unwrap(),
            ("host".into(), 81)
        );
        assert!(split_host_port("crates.io", None).is_err());
        assert!(split_host_port("h:99999", None).is_err());
        assert!(split_host_port(":80", None).is_err());
    }
}
