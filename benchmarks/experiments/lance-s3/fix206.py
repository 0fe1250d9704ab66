"""Probe-only shim: rclone serve s3 answers a range GET with 200 + Content-Range; object_store
(LanceDB) insists on 206. Rewrite the status; one request per connection (Connection: close)."""
import socket, threading, sys, re
up = ("127.0.0.1", int(sys.argv[1])); listen = ("127.0.0.1", int(sys.argv[2]))
def recv_headers(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d: return buf, b""
        buf += d
    h, rest = buf.split(b"\r\n\r\n", 1)
    return h + b"\r\n\r\n", rest
def handle(c):
    try:
        h, rest = recv_headers(c)
        if not h: return
        m = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", h); n = int(m.group(1)) if m else 0
        while len(rest) < n: rest += c.recv(65536)
        h = re.sub(rb"(?i)\r\nconnection:[^\r]*", b"", h).replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1)
        u = socket.create_connection(up); u.sendall(h + rest)
        rh, body = recv_headers(u)
        if re.search(rb"(?i)\r\ncontent-range:", rh) and rh.startswith(b"HTTP/1.1 200"):
            rh = b"HTTP/1.1 206 Partial Content" + rh[len(rh.split(b"\r\n",1)[0]):]
        c.sendall(rh + body)
        while d := u.recv(1 << 20): c.sendall(d)
        u.close()
    finally:
        c.close()
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); srv.bind(listen); srv.listen(256)
while True:
    c, _ = srv.accept(); threading.Thread(target=handle, args=(c,), daemon=True).start()
