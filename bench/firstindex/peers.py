"""Side by side with peers: index the same repositories with codegraphcontext, code-graph-rag
and semgraph on the same Bolt server and measure wall time, peak RSS, nodes, edges and calls.

    python -m bench.firstindex.peers [--synth-files 200] [--skip-install] [--out bench/peers.json]

NOT part of the test suite or CI. It installs each peer from PyPI into its own virtual
environment under ``/var/tmp/semgraph-peers`` (idempotent: a marker file records what was
installed) and never into the repository or semgraph's own venv. No peer code is committed.

Every run starts from an EMPTY graph: the script deletes every node, constraint and index on
the server named by ``SEMGRAPH_BOLT_URI`` before each tool -- point it at a private stack
(``SEMGRAPH_STATE_DIR=... SEMGRAPH_BOLT_URI=... SEMGRAPH_ES_URL=... semgraph services up``).

Repositories: this repository's ``src/`` at a fixed commit (``SRC_COMMIT``) and a synthetic
repository from ``bench.synth`` (``--synth-files`` files, seed 1). Each tool runs under
``/usr/bin/time -v`` (its "Maximum resident set size" is that of the largest single process
of the tool's process tree). Counts are read from the graph after each run.

Peer set-up, recorded here because it is part of "the exact commands":

* codegraphcontext (Python 3.11 venv): ``pip install codegraphcontext`` pulls
  tree-sitter-language-pack 1.x, which downloads its grammars from GitHub at run time (no
  network here: every file then yields no symbols, silently). We add
  ``pip install tree-sitter-language-pack==0.13.0`` (from PyPI, grammars inside the wheel),
  which pip flags as outside codegraphcontext's declared range (>=1.6) but which works.
  Neo4j credentials are required by its CLI; the local server has auth off and ignores them.
* code-graph-rag (requires Python >= 3.12; a pyenv 3.12 interpreter is used): ``pip install
  'code-graph-rag[memgraph,neo4j,treesitter-full]'`` (the plain package parses Python only).
  Its Memgraph backend is tried first against the Bolt server and fails (recorded with the
  error text); it is then run with its Neo4j backend against the same server, with
  embeddings off (``SKIP_EMBEDDINGS=true``: its embeddings need Qdrant and a model download).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PEERS = Path(os.environ.get("SEMGRAPH_PEERS_DIR", "/var/tmp/semgraph-peers"))
SRC_COMMIT = "7592df9"  # this repository's src/ as indexed by every tool
CGC_SPECS = ["codegraphcontext", "tree-sitter-language-pack==0.13.0"]
CGR_SPECS = ["code-graph-rag[memgraph,neo4j,treesitter-full]"]
GIT_IDENTITY = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
BOOKKEEPING = ["JobQueue", "RepoLock", "IndexRun", "SemgraphHealth", "Worker", "JobDelivery"]


def sh(args: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, text=True, capture_output=True, **kw)


def find_python312() -> str:
    for cand in ("python3.12", str(Path.home() / ".pyenv/versions/3.12.1/bin/python3.12")):
        path = shutil.which(cand) or (cand if Path(cand).exists() else None)
        if path:
            return path
    found = sorted(Path.home().glob(".pyenv/versions/3.12*/bin/python3.12"))
    if found:
        return str(found[-1])
    raise SystemExit("code-graph-rag needs Python >= 3.12 and none was found")


def ensure_venv(name: str, python: str, specs: list[str]) -> Path:
    """Create PEERS/name with ``python`` and pip-install ``specs`` unless already done."""
    venv = PEERS / name
    marker = venv / ".semgraph-bench-installed"
    if marker.exists() and marker.read_text() == json.dumps(specs):
        return venv
    if not (venv / "bin" / "python").exists():
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
    for spec in specs:  # one at a time: a later pin deliberately overrides an earlier range
        proc = sh([str(venv / "bin" / "pip"), "install", "-q", spec])
        if proc.returncode != 0:
            raise SystemExit(f"pip install {spec} into {venv} failed:\n{proc.stderr[-3000:]}")
    marker.write_text(json.dumps(specs))
    return venv


def prepare_repos(synth_files: int) -> dict[str, Path]:
    from bench.synth import generate

    repos = PEERS / "repos"
    repos.mkdir(parents=True, exist_ok=True)
    src = repos / f"semgraph-src-{SRC_COMMIT}"
    if not (src / ".git").exists():
        shutil.rmtree(src, ignore_errors=True)
        src.mkdir()
        archive = subprocess.run(
            ["git", "archive", SRC_COMMIT, "src"], cwd=ROOT, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
        for args in (["init", "-q", "-b", "main"], ["add", "-A"]):
            subprocess.run(["git", *args], cwd=src, check=True, capture_output=True)
        subprocess.run(
            [*GIT_IDENTITY, "commit", "-qm", f"src at {SRC_COMMIT}"],
            cwd=src,
            check=True,
            capture_output=True,
        )
    synth = repos / f"synth-{synth_files}"
    if not (synth / ".git").exists():
        shutil.rmtree(synth, ignore_errors=True)
        generate(synth, synth_files, seed=1)
    return {f"semgraph src/ @{SRC_COMMIT}": src, f"synthetic {synth_files} files": synth}


def wipe(driver: Any) -> None:
    """Delete every node, constraint and index (peers' schemas collide with each other)."""
    with driver.session() as s:
        s.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
        for rec in s.run("SHOW CONSTRAINTS YIELD name RETURN name").data():
            s.run(f"DROP CONSTRAINT `{rec['name']}` IF EXISTS").consume()
        for rec in s.run("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name").data():
            s.run(f"DROP INDEX `{rec['name']}` IF EXISTS").consume()


def wipe_search() -> None:
    """Delete every semgraph index (and so its alias) on the stack's Elasticsearch."""
    from semgraph.config import load_settings
    from semgraph.db import connect_search
    from semgraph.search.index import SearchIndex

    settings = load_settings()
    es = connect_search(settings)
    try:
        manager = SearchIndex(es, settings)
        for info in manager.list_indexes():
            manager.delete_index(info.name)
    finally:
        es.close()


def counts(driver: Any) -> dict[str, Any]:
    """Nodes, edges and call edges in the graph, bookkeeping labels left out."""
    with driver.session() as s:
        labels = {
            r["l"]: r["c"]
            for r in s.run(
                "MATCH (n) WHERE none(l IN labels(n) WHERE l IN $skip) "
                "UNWIND labels(n) AS l RETURN l, count(*) AS c ORDER BY c DESC",
                skip=BOOKKEEPING,
            )
        }
        nodes = s.run(
            "MATCH (n) WHERE none(l IN labels(n) WHERE l IN $skip) RETURN count(n) AS c",
            skip=BOOKKEEPING,
        ).single()["c"]
        types = {
            r["t"]: r["c"]
            for r in s.run(
                "MATCH (a)-[r]->(b) WHERE none(l IN labels(a) + labels(b) WHERE l IN $skip) "
                "RETURN type(r) AS t, count(*) AS c ORDER BY c DESC",
                skip=BOOKKEEPING,
            )
        }
        calls = s.run(
            "MATCH (a)-[r]->(b) WHERE type(r) CONTAINS 'CALL' "
            "RETURN count(r) AS edges, count(DISTINCT [elementId(a), elementId(b)]) AS pairs"
        ).single()
        # semgraph marks a call with several candidates tier='ambiguous' (one edge to each);
        # codegraphcontext writes guesses as HEURISTIC_CALLS: both are left out of "confident"
        confident = s.run(
            "MATCH (a)-[r]->(b) WHERE type(r) CONTAINS 'CALL' AND type(r) <> 'HEURISTIC_CALLS' "
            "AND coalesce(r.tier, '') <> 'ambiguous' "
            "RETURN count(r) AS edges, count(DISTINCT [elementId(a), elementId(b)]) AS pairs"
        ).single()
        by_kind = {
            f"{r['t']}/{r['tier']}" if r["tier"] else r["t"]: r["c"]
            for r in s.run(
                "MATCH ()-[r]->() WHERE type(r) CONTAINS 'CALL' "
                "RETURN type(r) AS t, r.tier AS tier, count(*) AS c ORDER BY c DESC"
            )
        }
    return {
        "nodes": nodes,
        "edges": sum(types.values()),
        "call_edges": calls["edges"],
        "call_pairs": calls["pairs"],
        "confident_call_edges": confident["edges"],
        "confident_call_pairs": confident["pairs"],
        "calls_by_kind": by_kind,
        "labels": labels,
        "edge_types": types,
    }


def timed(cmd: list[str], env: dict[str, str], cwd: Path, log: Path) -> dict[str, Any]:
    """Run ``cmd`` under GNU time; wall seconds, max RSS (largest process), exit code."""
    started = time.monotonic()
    proc = sh(["/usr/bin/time", "-v", *cmd], env=env, cwd=cwd, timeout=3600)
    wall = time.monotonic() - started
    log.write_text(proc.stdout + "\n----- stderr -----\n" + proc.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    status = re.search(r"Exit status: (\d+)", proc.stderr)
    return {
        "wall_s": round(wall, 2),
        "peak_rss_mib": round(int(rss.group(1)) / 1024, 1) if rss else None,
        "rc": int(status.group(1)) if status else proc.returncode,
        "stdout": proc.stdout,
        "stderr": proc.stderr,
    }


def _error_line(text: str) -> str:
    """The last line that names an error, for the report."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith(("Command ", "Exit status"))]
    raised = [ln for ln in lines if re.match(r"^[A-Z]\w*(Error|Exception): ", ln)]
    if raised:  # the exception a CLI died with (its message may wrap over several lines)
        return raised[-1][:400]
    hits = [ln for ln in lines if re.search(r"error|Error|ERROR|not responding|failed", ln)]
    return (hits or lines or ["(no output)"])[-1][:400]


def base_env() -> dict[str, str]:
    home = PEERS / "home"
    home.mkdir(parents=True, exist_ok=True)
    keep = ("PATH", "LANG", "LC_ALL", "TERM")
    return {k: os.environ[k] for k in keep if k in os.environ} | {"HOME": str(home)}


def run_tools(repo: Path, bolt: str, driver: Any) -> list[dict[str, Any]]:
    host, port = bolt.split("://", 1)[1].rsplit(":", 1)
    logs = PEERS / "logs"
    logs.mkdir(exist_ok=True)
    env = base_env()
    tag = repo.name
    results: list[dict[str, Any]] = []

    cgc_env = env | {
        "DEFAULT_DATABASE": "neo4j",
        "NEO4J_URI": bolt,
        "NEO4J_USERNAME": "neo4j",
        "NEO4J_PASSWORD": "unused-auth-off",
    }
    cgc = [str(PEERS / "cgc" / "bin" / "cgc"), "index", str(repo)]
    wipe(driver)
    shutil.rmtree(PEERS / "home" / ".codegraphcontext", ignore_errors=True)
    r = timed(cgc, cgc_env, repo, logs / f"cgc-{tag}.log")
    results.append(_row("codegraphcontext (Neo4j)", cgc, cgc_env, r, driver))

    cgr = [str(PEERS / "cgr" / "bin" / "cgr"), "start", "--update-graph", "--repo-path", "."]
    mg_env = env | {
        "GRAPH_BACKEND": "memgraph",
        "MEMGRAPH_HOST": host,
        "MEMGRAPH_PORT": port,
        "SKIP_EMBEDDINGS": "true",
    }
    wipe(driver)
    shutil.rmtree(PEERS / "home" / ".cgr", ignore_errors=True)
    r = timed(cgr, mg_env, repo, logs / f"cgr-memgraph-{tag}.log")
    row = _row("code-graph-rag (Memgraph backend)", cgr, mg_env, r, driver)
    if r["rc"] != 0:
        row["probe"] = mgclient_probe(host, port)
    results.append(row)

    nj_env = env | {"GRAPH_BACKEND": "neo4j", "NEO4J_URI": bolt, "SKIP_EMBEDDINGS": "true"}
    wipe(driver)
    shutil.rmtree(PEERS / "home" / ".cgr", ignore_errors=True)
    r = timed(cgr, nj_env, repo, logs / f"cgr-neo4j-{tag}.log")
    results.append(_row("code-graph-rag (Neo4j backend)", cgr, nj_env, r, driver))

    sg_env = {
        **os.environ,
        "SEMGRAPH_LOG_LEVEL": "WARNING",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    wipe(driver)
    wipe_search()  # no vectors to reuse: semgraph embeds everything, as on a first index
    subprocess.run([sys.executable, "-m", "semgraph", "init"], env=sg_env, check=True)
    sg = [sys.executable, "-m", "semgraph", "index", str(repo), "--force", "--json"]
    r = timed(sg, sg_env, repo, logs / f"semgraph-{tag}.log")
    row = _row("semgraph (Neo4j + Elasticsearch)", sg, {}, r, driver)
    if r["rc"] == 0:
        run = json.loads(r["stdout"]).get("run") or {}
        phases = json.loads(run.get("phases_s") or "{}")
        row["phases_s"] = phases
        row["graph_only_s"] = round(
            sum(phases.get(p, 0.0) for p in ("checkout", "parse", "resolve", "graph_publish")), 2
        )
    results.append(row)
    return results


def _row(
    tool: str, cmd: list[str], env: dict[str, str], r: dict[str, Any], driver: Any
) -> dict[str, Any]:
    shown = {k: v for k, v in env.items() if k not in ("PATH", "LANG", "LC_ALL", "TERM")}
    row: dict[str, Any] = {
        "tool": tool,
        "command": " ".join(f"{k}={v}" for k, v in shown.items())
        + (" " if shown else "")
        + " ".join(Path(c).name if i == 0 else c for i, c in enumerate(cmd)),
        "wall_s": r["wall_s"],
        "peak_rss_mib": r["peak_rss_mib"],
        "rc": r["rc"],
    }
    if r["rc"] == 0:
        row.update(counts(driver))
    else:
        row["error"] = _error_line(r["stdout"] + "\n" + r["stderr"])
    return row


def mgclient_probe(host: str, port: str) -> str:
    """What pymgclient (code-graph-rag's Memgraph driver) gets from this Bolt server, in its
    default mode (explicit transactions, cgr's health probe) and in autocommit (cgr's
    ingestor)."""
    results = []
    for mode, setup in (("default", ""), ("autocommit", "c.autocommit = True; ")):
        code = (
            "import mgclient\n"
            "try:\n"
            f"    c = mgclient.connect(host={host!r}, port={int(port)}); {setup}\n"
            "    cur = c.cursor(); cur.execute('RETURN 1'); print('ok', cur.fetchall())\n"
            "except Exception as e:\n"
            "    print(type(e).__name__ + ': ' + ' '.join(str(e).split()))\n"
        )
        proc = sh([str(PEERS / "cgr" / "bin" / "python"), "-c", code], timeout=60)
        text = proc.stdout.strip() or proc.stderr.strip()
        if proc.returncode < 0 or proc.returncode == 139:
            text = f"process killed by signal {-proc.returncode if proc.returncode < 0 else 11}"
            text += " (SIGSEGV)" if proc.returncode in (-11, 139) else ""
        results.append(f"{mode}: {text[:140]}")
    return "; ".join(results)


def versions() -> dict[str, str]:
    out = {}
    for venv, pkg in (("cgc", "codegraphcontext"), ("cgr", "code-graph-rag")):
        proc = sh([str(PEERS / venv / "bin" / "pip"), "show", pkg])
        m = re.search(r"^Version: (.+)$", proc.stdout, re.M)
        out[pkg] = m.group(1) if m else "not installed"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--synth-files", type=int, default=200)
    parser.add_argument("--skip-install", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "peers.json")
    args = parser.parse_args()

    from neo4j import GraphDatabase

    from semgraph.config import load_settings

    PEERS.mkdir(parents=True, exist_ok=True)
    if not args.skip_install:
        ensure_venv("cgc", shutil.which("python3.11") or sys.executable, CGC_SPECS)
        ensure_venv("cgr", find_python312(), CGR_SPECS)
    settings = load_settings()
    bolt = settings.bolt_uri
    repos = prepare_repos(args.synth_files)
    report: dict[str, Any] = {
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "bolt": bolt,
        "versions": versions(),
        "install": {"cgc": CGC_SPECS, "cgr": CGR_SPECS},
        "repos": {},
    }
    with GraphDatabase.driver(bolt) as driver:
        for label, repo in repos.items():
            load = os.getloadavg()[0]
            rows = run_tools(repo, bolt, driver)
            for row in rows:
                print(json.dumps({k: v for k, v in row.items() if k not in ("labels",)}))
            report["repos"][label] = {"path": str(repo), "load_1m_at_start": load, "runs": rows}
        wipe(driver)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
