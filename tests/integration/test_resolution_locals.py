"""Typed locals, fields and parameters in Java, TypeScript and Rust against the real graph
server (issue 14): the receiver tier follows `Repo local = new Repo()`, `var`, fields with and
without `this.`, `const r: Row`, `let pool = Pool::new()` and return types; an untyped or
external receiver is not linked by the unique tier."""

from __future__ import annotations

from pathlib import Path

import pytest

from semgraph.config import Settings
from semgraph.db import Graph
from tests.integration.resolution_repo import callees, callers, publish

pytestmark = pytest.mark.integration

FILES = {
    "src/main/java/app/Repo.java": """package app;
public class Repo {
    public Item find(int id) { return new Item(); }
    public void save(Item item) { }
}
""",
    "src/main/java/app/Item.java": """package app;
public class Item {
    public void touch() { }
    public void close() { }
}
""",
    "src/main/java/app/Service.java": """package app;
import java.util.List;
public class Service {
    private Repo repo;
    private final Item cached = new Item();
    public Service(Repo repo) { this.repo = repo; }
    public void run(Item given, List<Item> items, Runnable task) {
        Repo local = new Repo();
        var other = new Repo();
        local.save(given);
        other.find(1).touch();
        this.repo.find(2);
        repo.save(given);
        given.touch();
        cached.touch();
        task.run();
        for (Item it : items) { it.close(); }
    }
}
""",
    "web/repo.ts": """export class Store {
  get(id: number): Row { return new Row(); }
}
export class Row {
  save(): void {}
}
""",
    "web/app.ts": """import { Store, Row } from "./repo";
class App {
  private store: Store = new Store();
  other = new Store();
  run(row: Row, cb: () => void) {
    const s = new Store();
    const r: Row = s.get(1);
    r.save();
    s.get(2).save();
    this.store.get(3);
    this.other.get(4);
    row.save();
    cb();
  }
}
""",
    "rs/src/lib.rs": """pub struct Conn { pool: Pool }
pub struct Pool {}
impl Pool {
    pub fn new() -> Self { Pool {} }
    pub fn get(&self) -> Conn { Conn { pool: Pool {} } }
}
impl Conn {
    pub fn query(&self) -> u32 { 1 }
    pub fn pool_of(&self) -> u32 { self.pool.size() }
}
impl Pool { pub fn size(&self) -> u32 { 2 } }
pub fn run(p: &Pool) {
    let pool = Pool::new();
    let c = pool.get();
    c.query();
    p.get().query();
    let mut m: Conn = p.get();
    m.query();
}
""",
}
FILES |= {
    "js/a.js": (
        "export class Store { get() { return 1; } }\nexport class Other { get() { return 2; } }\n"
    ),
    "js/b.js": (
        'import { Store } from "./a.js";\nclass App {\n  items = new Store();\n'
        "  constructor() { this.s = new Store(); }\n"
        "  run(p) { const s = new Store(); s.get(); this.s.get(); this.items.get(); p.get(); }\n}\n"
    ),
}
JAVA = "src.main.java.app"


def test_java_locals_fields_and_parameters(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    reader, _ = publish(graph, settings, tmp_path, FILES, "locals")
    assert callees(reader, f"{JAVA}.Service.Service.run", "locals") == {
        (f"{JAVA}.Repo.Repo", "module"),  # new Repo(): a class of the same package
        (f"{JAVA}.Repo.Repo.save", "receiver"),  # Repo local; the field repo (no this.)
        (f"{JAVA}.Repo.Repo.find", "receiver"),  # var other = new Repo(); this.repo
        (f"{JAVA}.Item.Item.touch", "receiver"),  # find() returns Item; Item given; cached
        (f"{JAVA}.Item.Item.close", "receiver"),  # for (Item it : items)
    }
    # task.run() is a Runnable parameter's: not Service.run through the unique tier
    assert callers(reader, f"{JAVA}.Service.Service.run", "locals") == set()


def test_typescript_and_rust_locals(graph: Graph, settings: Settings, tmp_path: Path) -> None:
    reader, _ = publish(graph, settings, tmp_path, FILES, "locals")
    assert callees(reader, "web.app.App.run", "locals") == {
        ("web.repo.Store", "import"),
        ("web.repo.Store.get", "receiver"),  # const s = new Store(); this.store; this.other
        ("web.repo.Row.save", "receiver"),  # const r: Row; s.get(2).save(); row: Row
    }
    assert callees(reader, "rs.src.lib.run", "locals") == {
        ("rs.src.lib.Pool.new", "receiver"),  # Pool::new()
        ("rs.src.lib.Pool.get", "receiver"),  # let pool = Pool::new() -> Self; p: &Pool
        ("rs.src.lib.Conn.query", "receiver"),  # let c = pool.get() -> Conn; let mut m: Conn
    }
    assert callees(reader, "rs.src.lib.Conn.pool_of", "locals") == {
        ("rs.src.lib.Pool.size", "receiver")  # self.pool, a struct field
    }


def test_javascript_locals(graph: Graph, settings: Settings, tmp_path: Path) -> None:
    reader, _ = publish(graph, settings, tmp_path, FILES, "locals")
    # const s = new Store(), this.s = new Store(), a field `items = new Store()`; p.get() is
    # an untyped parameter's (not Other.get, not Store.get)
    assert callees(reader, "js.b.App.run", "locals") == {
        ("js.a.Store", "import"),
        ("js.a.Store.get", "receiver"),
    }
    assert callers(reader, "js.a.Other.get", "locals") == set()


IMPORTS = {
    "lib/src/main/java/com/acme/model/Part.java": (
        "package com.acme.model;\npublic class Part {\n    public int weight() { return 1; }\n}\n"
    ),
    "app/src/main/java/com/acme/app/Use.java": (
        "package com.acme.app;\nimport com.acme.model.Part;\nimport java.util.List;\n"
        "public class Use {\n    int total(Part p, List<Part> ps) {\n"
        "        Part q = new Part();\n        ps.add(q);\n"
        "        return p.weight() + q.weight();\n"
        "    }\n}\n"
    ),
    "web/src/repo.ts": "export class Repo {\n  find(): number { return 1; }\n}\n",
    "web/src/main.ts": (
        'import { Repo } from "./repo.js";\n'
        "export function main(): number {\n  const r = new Repo();\n  return r.find();\n}\n"
    ),
    "rs/src/lib.rs": (
        "pub struct Conf {}\nimpl Conf {\n"
        "    pub fn load() -> anyhow::Result<Conf> { Ok(Conf {}) }\n"
        "    pub fn size(&self) -> u32 { 1 }\n}\n"
        "pub fn run() -> u32 {\n    let c = Conf::load().unwrap();\n    c.size()\n}\n"
    ),
}


def test_class_imports_esm_paths_and_unwrapped_results(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    reader, _ = publish(graph, settings, tmp_path, IMPORTS, "imps")
    model = "lib.src.main.java.com.acme.model.Part"
    use = "app.src.main.java.com.acme.app.Use.Use.total"
    # `import com.acme.model.Part` names Part.java's class (not an external module); the
    # List<Part> parameter is java.util's: ps.add() gets no edge
    assert callees(reader, use, "imps") == {
        (f"{model}.Part", "import"),
        (f"{model}.Part.weight", "receiver"),
    }
    # TypeScript ESM: "./repo.js" is the source repo.ts
    assert callees(reader, "web.src.main.main", "imps") == {
        ("web.src.repo.Repo", "import"),
        ("web.src.repo.Repo.find", "receiver"),
    }
    # Rust: anyhow::Result<Conf> read as Conf; unwrap() is Result's own (no edge)
    assert callees(reader, "rs.src.lib.run", "imps") == {
        ("rs.src.lib.Conf.load", "receiver"),
        ("rs.src.lib.Conf.size", "receiver"),
    }
