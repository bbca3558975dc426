"""`kubesched queue` (simulated, and against a URL that gives no queue) and the scheduler options of
`kubesched cluster up` that fail before anything is served."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from kubesched.cli.main import main


def test_simulated_queue_as_json_holds_the_huge_pod_and_the_gated_one(capsys):
    assert main(["queue", "--output", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    pods = {p["key"]: p for p in document["pods"]}
    assert pods["default/huge"]["queue"] == "unschedulablePods"
    assert pods["default/huge"]["rejected_by"] == ["NodeResourcesFit"]
    assert pods["default/gated"]["queue"] == "gated"
    assert pods["default/gated"]["rejected_by"] == ["SchedulingGates"]
    assert document["pending"] == {"active": 0, "backoff": 0, "unschedulable": 1, "gated": 1}


def test_simulated_queue_as_a_table(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["queue", "--nodes", "2", "--pods", "4", "--horizon", "5"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "POD" in line)
    assert header.split() == ["POD", "QUEUE", "ATTEMPTS", "BACKOFF", "UNTIL", "REJECTED", "BY", "WAKES", "ON"]
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.strip().startswith("default/")}
    assert rows["default/huge"][1:5] == ["unschedulablePods", "1", "-", "NodeResourcesFit"]
    assert rows["default/gated"][1:5] == ["gated", "0", "-", "SchedulingGates"]
    assert "Pending: 0 active, 0 backoff, 1 unschedulable, 1 gated" in out


def test_a_bad_horizon_is_a_usage_error(capsys):
    assert main(["queue", "--horizon", "0"]) == 2
    assert "--horizon" in capsys.readouterr().err


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_url_is_one_red_line(capsys):
    url = f"http://127.0.0.1:{closed_port()}"
    assert main(["queue", "--url", url]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{url}: cannot connect")


class _Text(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<html>not a scheduler</html>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def text_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Text)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_answer_that_is_not_json_is_one_red_line(capsys, text_server):
    assert main(["queue", "--url", text_server, "--output", "json"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"{text_server}: /debug/queue did not answer JSON"]


def test_cluster_up_refuses_a_bad_scheduler_config(tmp_path, capsys):
    bad = tmp_path / "sched.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nbogus: 1\n")
    assert main(["cluster", "up", "--port", "0", "--scheduler", "--scheduler-config", str(bad)]) == 2
    out = " ".join(capsys.readouterr().err.split())
    assert out.startswith(f"--scheduler-config: {bad}:")


def test_cluster_up_wants_scheduler_with_a_scheduler_config(tmp_path, capsys):
    assert main(["cluster", "up", "--port", "0", "--scheduler-config", str(tmp_path / "none.yaml")]) == 2
    assert "--scheduler-config needs --scheduler" in capsys.readouterr().err


def test_the_table_is_whole_when_piped(capsys):
    assert main(["queue"]) == 0  # captured: not a terminal
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "POD" in line)
    assert header.split() == ["POD", "QUEUE", "ATTEMPTS", "BACKOFF", "UNTIL", "REJECTED", "BY", "WAKES", "ON"]
    assert "Node(Add|UpdateNodeAllocatable) (NodeResourcesFit)" in out
    assert out.rstrip().endswith("A pod's last attempt, node by node: kubesched explain default/huge")
