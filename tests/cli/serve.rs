//! A small HTTP server on 127.0.0.1 for what the runner reads over the network (a chart
//! repository, a schema's document): it answers each path with what the test put there, a
//! status and a body, from a listener bound before the test starts it (no port race), and keeps
//! every request it was sent. It stops when dropped.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// What a path answers.
#[derive(Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
    /// The Content-Length said: longer than the body sends a package cut short.
    pub length: Option<usize>,
}

impl Reply {
    pub fn ok(body: impl Into<Vec<u8>>) -> Self {
        Reply {
            status: 200,
            body: body.into(),
            length: None,
        }
    }
}

/// A request as it came: its path and headers (lower-cased names).
#[derive(Clone, Debug)]
pub struct Request {
    pub path: String,
    pub headers: BTreeMap<String, String>,
}

pub struct Server {
    pub url: String,
    replies: Arc<Mutex<BTreeMap<String, Reply>>>,
    requests: Arc<Mutex<Vec<Request>>>,
    listener: TcpListener,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl Server {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = Server {
            url,
            replies: Arc::default(),
            requests: Arc::default(),
            listener: listener.try_clone().unwrap(),
            stop: Arc::default(),
        };
        let (replies, requests) = (server.replies.clone(), server.requests.clone());
        let stop = server.stop.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                let Ok(mut stream) = stream else { return };
                let (replies, requests) = (replies.clone(), requests.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    if reader.read_line(&mut line).is_err() {
                        return;
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                    let mut headers = BTreeMap::new();
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                            break;
                        }
                        if let Some((k, v)) = h.split_once(':') {
                            headers.insert(k.trim().to_lowercase(), v.trim().to_string());
                        }
                    }
                    requests.lock().unwrap().push(Request {
                        path: path.clone(),
                        headers,
                    });
                    let reply = replies.lock().unwrap().get(&path).cloned().unwrap_or(Reply {
                        status: 404,
                        body: b"404 Not Found".to_vec(),
                        length: None,
                    });
                    let head = format!(
                        "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        reply.status,
                        reply.length.unwrap_or(reply.body.len())
                    );
                    let _ = stream.write_all(head.as_bytes());
                    let _ = stream.write_all(&reply.body);
                    let _ = stream.flush();
                });
            }
        });
        server
    }

    /// Answers `path` (`/repo/index.yaml`) with `reply`.
    pub fn put(&self, path: &str, reply: Reply) -> &Self {
        self.replies.lock().unwrap().insert(path.to_string(), reply);
        self
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The accepting thread ends at its next connection: make one.
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(self.listener.local_addr().unwrap());
    }
}
