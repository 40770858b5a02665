// The TypeScript compiler's own "go to definition" at every call of a dependent package
// (bench/accuracy/bench_crossrepo_js.py): the oracle for the npm cross-repository links. Usage:
//   node ts_definitions.cjs TYPESCRIPT_DIR WORKSPACE OUT.jsonl PACKAGE...
// Each package is WORKSPACE/<name>, its dependencies linked under its node_modules; the
// callee of each call and `new` (the property of `a.b()`, else the identifier) is asked for
// its definitions, each written with the real path it lies in (links resolved).
"use strict";
const fs = require("fs");
const path = require("path");
const [tsDir, ws, out, ...packages] = process.argv.slice(2);
const ts = require(path.join(tsDir, "node_modules", "typescript"));

const EXT = /\.(js|mjs|cjs|jsx|ts|tsx|mts|cts)$/;
function sources(dir, acc) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name.startsWith(".")) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) sources(p, acc);
    else if (EXT.test(e.name) && !e.name.endsWith(".d.ts")) acc.push(p);
  }
  return acc;
}

const options = {
  allowJs: true, checkJs: false, noEmit: true, target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
  maxNodeModuleJsDepth: 2, types: [], skipLibCheck: true,
};
const lines = [];
for (const name of packages) {
  const root = path.join(ws, name);
  const files = sources(root, []);
  const host = {
    getScriptFileNames: () => files,
    getScriptVersion: () => "1",
    getScriptSnapshot: (f) => (fs.existsSync(f) ? ts.ScriptSnapshot.fromString(fs.readFileSync(f, "utf8")) : undefined),
    getCurrentDirectory: () => root,
    getCompilationSettings: () => options,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: ts.sys.fileExists, readFile: ts.sys.readFile, readDirectory: ts.sys.readDirectory,
    directoryExists: ts.sys.directoryExists, getDirectories: ts.sys.getDirectories,
    realpath: ts.sys.realpath,
  };
  const ls = ts.createLanguageService(host, ts.createDocumentRegistry());
  const program = ls.getProgram();
  for (const file of files) {
    const sf = program.getSourceFile(file);
    if (!sf) continue;
    const visit = (node) => {
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const e = node.expression;
        const at = ts.isPropertyAccessExpression(e) ? e.name : ts.isIdentifier(e) ? e : null;
        if (at) {
          const line = sf.getLineAndCharacterOfPosition(at.getStart(sf)).line + 1;
          const defs = ls.getDefinitionAtPosition(file, at.getStart(sf)) || [];
          const targets = defs.map((d) => ({
            path: path.relative(ws, fs.realpathSync(d.fileName)), name: d.name, kind: d.kind,
            container: d.containerName,
          }));
          lines.push(JSON.stringify({ path: path.relative(ws, file), line, targets }));
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
}
fs.writeFileSync(out, lines.join("\n") + "\n");
