"""The `kubesched` command: minimal and demo."""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kubesched.cli.commands import COMMANDS
from kubesched.cli.main import main, parser


def test_minimal_json_reports_placements_and_rejections(capsys):
    assert main(["minimal", "--nodes", "2", "--pods", "10", "--seed", "1", "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["bound"] == 10
    assert len(report["placements"]) == 10
    assert report["rejected"] == sum(p["phase"] == "Failed" for p in report["placements"])
    assert set(report["nodes"]) == {"node-0", "node-1"}


def test_minimal_writes_a_trace(tmp_path, capsys):
    out = tmp_path / "trace.jsonl"
    assert main(["minimal", "--nodes", "1", "--pods", "2", "--trace", str(out), "--output", "json"]) == 0
    kinds = [json.loads(line)["kind"] for line in out.read_text().splitlines()]
    assert kinds.count("minimal.picked") == 2


def test_minimal_with_a_node_template(tmp_path, capsys):
    template = tmp_path / "node.yaml"
    template.write_text("status:\n  capacity: {cpu: '64', memory: 256Gi, pods: '110'}\n")
    assert main(["minimal", "--nodes", "1", "--pods", "12", "--node-template", str(template), "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["nodes"] == {"node-0": 64000}
    assert report["rejected"] == 0


def test_bad_node_template_is_a_clear_error(tmp_path, capsys):
    missing = tmp_path / "missing.yaml"
    assert main(["minimal", "--node-template", str(missing)]) == 2
    assert "--node-template" in capsys.readouterr().err


def test_demo_shows_the_overcommit_then_kubesched_without_it(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    first, second = out.split("2. The same burst, scheduled by kubesched")
    assert "Rejected by the kubelet" in first and "OutOfcpu" in first
    assert "OutOfcpu" not in second and "All 12 bound pods were admitted" in second
    assert "FailedScheduling huge: 0/3 nodes are available: 3 Insufficient cpu." in " ".join(second.split())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kind: Pod\n", "kind: a node template must be a Node, not 'Pod'"),
        ("status: {capacity: {cpu: lots}}\n", 'status.capacity[cpu]: Invalid value: "lots"'),
        ("status: {allocatable: {memory: [1]}}\n", "status.allocatable[memory]: Invalid value"),
        ("a: [\n", "not valid YAML (line 2, column 1)"),
        ("- a list\n", "a node template must be a Node manifest"),
    ],
    ids=["not-a-node", "bad-quantity", "quantity-list", "not-yaml", "not-a-mapping"],
)
def test_a_bad_node_template_is_one_line_naming_file_and_field(tmp_path, capsys, text, message):
    template = tmp_path / "node.yaml"
    template.write_text(text)
    assert main(["minimal", "--node-template", str(template)]) == 2
    out = capsys.readouterr().err.strip()
    assert out.startswith(f"--node-template: {template}: ")
    assert message in out
    assert "\n" not in out


@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_cluster_up_refuses_a_port_out_of_range(capsys, port):
    with pytest.raises(SystemExit) as exit_:
        main(["cluster", "up", "--port", port])
    assert exit_.value.code == 2
    assert "argument --port: " in capsys.readouterr().err


def test_a_closed_pipe_ends_the_output_quietly():
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubesched", "minimal", "--pods", "200", "--output", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # the reader is gone before the first write, as `| head -0` leaves it
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert err == b""


def test_golden_refuses_a_case_it_does_not_have_instead_of_failing_it(capsys):
    corpus = Path(__file__).resolve().parents[2] / "golden" / "corpus"
    assert main(["golden", str(corpus), "--case", "nosuch"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"--case: no case 'nosuch' in {corpus}") and captured.out == ""


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10", "example.com"])
def test_cluster_up_refuses_an_open_api_off_loopback_unless_asked(tmp_path, capsys, host):
    assert main(["cluster", "up", "--host", host, "--port", "0", "--kubeconfig", str(tmp_path / "k")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"--host {host}: the API would be open to anyone") and "--allow-unauthenticated" in err
    assert not (tmp_path / "k").exists()


def test_run_and_cluster_up_say_where_they_listen_in_their_help(capsys):
    for argv in (["run", "--help"], ["cluster", "up", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
    text = " ".join(capsys.readouterr().out.split())
    assert "default 127.0.0.1:10259, this machine only" in text and "without authentication" in text
    assert "default 127.0.0.1, this machine only" in text


def _options():
    def walk(parser, path):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, [*path, name])
            elif action.option_strings and action.dest not in ("help", "version"):
                yield " ".join(path), action

    return list(walk(parser(every=True), []))


def test_every_option_says_what_it_does_and_its_default():
    missing = []
    for command, action in _options():
        text = action.help or ""
        has_default = action.default not in (None, False, [], argparse.SUPPRESS) or action.choices
        if not text or (has_default and "default" not in text):
            missing.append(f"{command} {action.option_strings[0]}")
    assert missing == []


def test_version_names_kubesched_and_the_kube_scheduler_it_follows(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == "kubesched 0.1.0 (kube-scheduler v1.36.2)"


LOADED = (
    "import sys\n"
    "from kubesched.cli.main import main\n"
    "try:\n"
    "    main(sys.argv[1:])\n"
    "except SystemExit:\n"
    "    pass\n"
    "print(' '.join(sorted(m for m in sys.modules if m.startswith('kubesched'))), file=sys.stderr)\n"
)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--version"], {"kubesched", "kubesched.cli", "kubesched.cli.commands", "kubesched.cli.main"}),
        (["--help"], {"kubesched", "kubesched.cli", "kubesched.cli.commands", "kubesched.cli.main"}),
    ],
)
def test_version_and_help_import_no_command(argv, expected):
    done = subprocess.run([sys.executable, "-c", LOADED, *argv], capture_output=True, text=True, check=True)
    assert set(done.stderr.split()) == expected


def test_a_command_imports_its_own_module_and_no_other_command():
    done = subprocess.run([sys.executable, "-c", LOADED, "citations", "--help"], capture_output=True, text=True)
    loaded = set(done.stderr.split())
    assert "kubesched.cli.citations" in loaded
    others = {c.where.partition(":")[0] for c in COMMANDS} - {"kubesched.cli.citations"}
    assert loaded & others == set()


def test_every_command_has_its_parser_and_what_runs_it():
    top = parser(every=True)
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == [c.name for c in COMMANDS]
    for command in COMMANDS:
        assert callable(sub.choices[command.name].get_default("run")), command.name


def test_bench_list_piped_shows_every_workload_name_whole(capsys):
    from kubesched.workloads.cases import CASES

    assert main(["bench", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [f"{case.name}/{w.name}" for case in CASES.values() for w in case.workloads]
    assert names and all(any(line.split()[:1] == [name] for line in lines) for name in names)


@pytest.mark.parametrize("value", ["*,-cronjob", "replicaset,ttl"])
def test_cluster_up_names_an_unknown_controller(tmp_path, capsys, value):
    assert main(["cluster", "up", "--controllers", value, "--port", "0", "--kubeconfig", str(tmp_path / "k")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("--controllers: unknown controller(s)") and "known: daemonset, deployment" in err
    assert not (tmp_path / "k").exists()  # nothing was served


def _used_data_dir(tmp_path):
    from kubesched.clock import VirtualClock
    from kubesched.storage import MemoryStore
    from kubesched.storage.journal.sqlite import SqliteJournal

    journal = SqliteJournal(tmp_path / "data", history=10)
    MemoryStore(clock=VirtualClock(), journal=journal)
    journal.close()


@pytest.mark.parametrize(
    ("prepare", "extra", "message"),
    [
        (lambda tmp: (tmp / "data").write_text("x"), [], "data: File exists"),
        (
            lambda tmp: ((tmp / "data").mkdir(), (tmp / "data/state.db").write_text("x" * 512)),
            [],
            "not a kubesched data file",
        ),
        (_used_data_dir, ["--from", "snapshot.yaml"], "holds a cluster already; --from needs an empty data directory"),
    ],
)
def test_cluster_up_refuses_a_data_dir_it_cannot_use_in_one_line(
    tmp_path, capsys, monkeypatch, prepare, extra, message
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "snapshot.yaml").write_text("apiVersion: v1\nkind: List\nitems: []\n")
    prepare(tmp_path)
    argv = ["cluster", "up", "--data-dir", str(tmp_path / "data"), "--port", "0", "--kubeconfig", "k", *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("--data-dir: ") and message in err, err
    assert "\n" not in err and not (tmp_path / "k").exists()


def test_cluster_up_refuses_a_data_dir_another_server_holds(tmp_path, capsys):
    from kubesched.storage.journal.sqlite import SqliteJournal

    held = SqliteJournal(tmp_path / "data", history=10)
    try:
        argv = [
            "cluster",
            "up",
            "--data-dir",
            str(tmp_path / "data"),
            "--port",
            "0",
            "--kubeconfig",
            str(tmp_path / "k"),
        ]
        assert main(argv) == 2
    finally:
        held.close()
    assert (
        capsys.readouterr().err.strip()
        == f"--data-dir: {tmp_path / 'data'}: in use by another kubesched (pid {os.getpid()})"
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--data-dir", "data"], "--etcd: a cluster is kept in --data-dir or in --etcd, not both"),
        ([], "--etcd: http://127.0.0.1:1 /kubesched: cannot use etcd ("),
    ],
)
def test_cluster_up_refuses_an_etcd_it_cannot_use_in_one_line(tmp_path, capsys, monkeypatch, extra, message):
    monkeypatch.chdir(tmp_path)
    argv = ["cluster", "up", "--etcd", "http://127.0.0.1:1", "--port", "0", "--kubeconfig", "k", *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(message) and "\n" not in err, err
    assert not (tmp_path / "k").exists()


def test_cluster_up_from_a_snapshot_into_a_used_etcd_prefix_is_refused(etcd_url, tmp_path, capsys, monkeypatch):
    from kubesched.clock import VirtualClock
    from kubesched.storage import MemoryStore
    from kubesched.storage.journal.etcd import EtcdJournal

    prefix = f"/test-{tmp_path.name}"
    journal = EtcdJournal(etcd_url, history=10, prefix=prefix)
    MemoryStore(clock=VirtualClock(), journal=journal)
    journal.close()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "snapshot.yaml").write_text("apiVersion: v1\nkind: List\nitems: []\n")
    argv = ["cluster", "up", "--etcd", etcd_url, "--etcd-prefix", prefix, "--from", "snapshot.yaml", "--port", "0"]
    assert main([*argv, "--kubeconfig", "k"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"--etcd: etcd {etcd_url} {prefix}: holds a cluster already; --from needs an empty prefix"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["snapshot", "sync", "--to", "absent"], "--to: Configuration file absent not found"),
        (["snapshot", "sync", "--to", "k", "--duration", "5x"], '--duration: time: invalid duration "5x"'),
        (["record", "-o", "r.jsonl", "--duration=-1s"], "--duration: must not be negative, got -1s"),
        (["replay", "absent.jsonl"], "absent.jsonl: No such file or directory"),
    ],
)
def test_sync_record_and_replay_name_a_bad_option_in_one_line(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    from kubesched.apiserver.kubeconfig import write_kubeconfig

    write_kubeconfig(tmp_path / "k", "http://127.0.0.1:1")  # a cluster never reached: the options fail first
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "k"))
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == message
