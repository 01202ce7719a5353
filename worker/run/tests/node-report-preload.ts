/**
 * A file Node loads before the test command's Node processes (NODE_OPTIONS=--require, test-reports.ts):
 * when the process is vitest's or jest's command line, it adds their JSON report to the arguments, so
 * the gate gets per-test results from a repository's own `npm test` without rewriting it. Their own
 * reporters stay as they were (vitest's `default` is named only when the command names none), and every
 * other process (the tests themselves, their workers, any other tool) is left alone. It runs inside the
 * sandbox, so it is plain CommonJS that can never throw: a report that is not written only means the
 * gate falls back to the command's exit code.
 */
export const NODE_REPORT_PRELOAD = `"use strict";
// agent-fix: adds a JSON report to vitest's and jest's command line (their own output unchanged).
(() => {
  try {
    const dir = process.env.AGENT_FIX_TEST_REPORTS;
    if (!dir) return;
    let script = process.argv[1] || "";
    try { script = require("node:fs").realpathSync(script); } catch {}
    const args = process.argv.slice(2);
    const has = (flag) => args.some((arg) => arg === flag || arg.startsWith(flag + "=") || arg.startsWith(flag + "."));
    const file = dir + "/" + process.pid + "-" + Date.now();
    if (/[\\\\/]vitest[\\\\/]vitest\\.mjs$/.test(script)) {
      const command = args.find((arg) => !arg.startsWith("-"));
      if (["bench", "init", "list", "typecheck"].includes(command) || has("--outputFile")) return;
      if (!has("--reporter")) process.argv.push("--reporter=default");
      process.argv.push("--reporter=json", "--outputFile.json=" + file + ".vitest.json");
    } else if (/[\\\\/]jest(?:-cli)?[\\\\/]bin[\\\\/]jest\\.js$/.test(script)) {
      if (["--json", "--outputFile", "--listTests", "--showConfig", "--watch", "--watchAll"].some(has)) return;
      process.argv.push("--json", "--outputFile=" + file + ".jest.json");
    }
  } catch {}
})();
`;
