// A SCIP index as JSON lines (bench/accuracy/accuracy_oracles.py, the TypeScript oracle):
//   node scip_dump.cjs SCIP_TYPESCRIPT_DIR INDEX.scip OUT.jsonl
// read with scip-typescript's own generated protobuf bindings (dist/src/scip.js). One line a
// document: {"path", "occ": [[startLine, startChar, endLine, endChar, symbol, roles], ...]}
// (0-based lines, UTF-16 characters, as SCIP has them); then one line a symbol that has
// relationships: {"symbol", "rel": [[target, isImplementation, isReference, isTypeDefinition,
// isDefinition], ...]}.
"use strict";
const fs = require("fs");
const path = require("path");
const [dir, input, out] = process.argv.slice(2);
const { scip } = require(path.join(dir, "node_modules", "@sourcegraph", "scip-typescript", "dist", "src", "scip.js"));

const index = scip.Index.deserializeBinary(fs.readFileSync(input));
const lines = [];
const related = [];
for (const doc of index.documents) {
  const occ = [];
  for (const o of doc.occurrences) {
    const r = o.range;
    const [sl, sc, el, ec] = r.length === 3 ? [r[0], r[1], r[0], r[2]] : r;
    occ.push([sl, sc, el, ec, o.symbol, o.symbol_roles]);
  }
  lines.push(JSON.stringify({ path: doc.relative_path, occ }));
  for (const info of doc.symbols) {
    if (info.relationships.length === 0) continue;
    const rel = info.relationships.map((x) => [
      x.symbol, x.is_implementation, x.is_reference, x.is_type_definition, x.is_definition,
    ]);
    related.push(JSON.stringify({ symbol: info.symbol, rel }));
  }
}
fs.writeFileSync(out, lines.concat(related).map((l) => l + "\n").join(""));
