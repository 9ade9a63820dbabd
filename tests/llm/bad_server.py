#!/usr/bin/env python3
"""A small misbehaving OpenAI-compatible server on 127.0.0.1 for nnperf llm load's tests.

usage: bad_server.py MODE PORTFILE
MODE: ok (a well-formed stream of 4 tokens), http500, garbage (events that are not JSON),
cut (a stream cut short: 2 tokens, then the connection closes), silent (accepts and never
answers), notokens (a stream with [DONE] and no token), huge (one endless line).
Writes the port it listens on to PORTFILE; exits by itself after 60 s at the latest."""
import http.server, json, socketserver, sys, threading, time

MODE, PORTFILE = sys.argv[1], sys.argv[2]


def chunk(text, finish=None):
    return {"choices": [{"text": text, "index": 0, "finish_reason": finish}]}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        body = b'{"data": [{"id": "bad", "meta": {"n_vocab": 500}}]}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def event(self, obj):
        data = obj if isinstance(obj, str) else json.dumps(obj)
        self.wfile.write(("data: " + data + "\n\n").encode())
        self.wfile.flush()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if MODE == "silent":
            time.sleep(30)
            return
        if MODE == "http500":
            body = b'{"error": {"message": "model exploded"}}'
            self.send_response(500)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        if MODE == "garbage":
            self.event("{not json at all")
        elif MODE == "notokens":
            self.event("[DONE]")
        elif MODE == "huge":
            self.wfile.write(b"data: " + b"x" * (200 * 1024))
        elif MODE == "cut":
            self.event(chunk("a"))
            self.event(chunk("b"))
        else:
            for t in "abcd":
                self.event(chunk(t))
                time.sleep(0.01)
            self.event(chunk("", "length"))
            self.event({"choices": [], "usage": {"prompt_tokens": 8, "completion_tokens": 4}})
            self.event("[DONE]")
        self.close_connection = True


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(PORTFILE + ".tmp", PORTFILE)
threading.Timer(60, lambda: os._exit(0)).start()
srv.serve_forever()
