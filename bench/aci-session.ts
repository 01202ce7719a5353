/**
 * The scripted 20-step session of the obs_tokens benchmark: the same investigation and edits of the
 * `yaml` package's sources, once through the ACI and once through plain bash (find, grep -rn, cat,
 * sed -n, sed -i), as an agent with only a shell would do it. Tokens are estimated as characters / 4.
 */
import { execFileSync } from "node:child_process";
import { cpSync } from "node:fs";
import path from "node:path";
import type { Environment, Sandbox } from "../src/shared/contracts.js";

type Step = { aci: [string, Record<string, unknown>]; bash: string };

const tokens = (text: string) => Math.ceil(text.length / 4);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const doc = "dist/doc/Document.js";
const composer = "dist/compose/composer.js";

function steps(): Step[] {
  const node = `node -e "console.log(require('./dist/index.js').stringify({ a: [1, 2] }))"`;
  return [
    { aci: ["find_file", { file_name: "Document.js" }], bash: "find . -name Document.js" },
    { aci: ["search_dir", { search_term: "setSchema" }], bash: "grep -rn setSchema ." },
    { aci: ["search_dir", { search_term: "toString" }], bash: "grep -rn toString ." },
    { aci: ["search_dir", { search_term: "toString", dir: "dist/doc" }], bash: "grep -rn toString dist/doc" },
    { aci: ["open", { path: doc }], bash: `cat ${doc}` },
    { aci: ["search_file", { search_term: "setSchema" }], bash: `grep -n setSchema ${doc}` },
    { aci: ["goto", { line_number: 254 }], bash: `sed -n '239,338p' ${doc}` },
    { aci: ["scroll_up", {}], bash: `sed -n '141,240p' ${doc}` },
    {
      aci: ["edit", { start_line: 260, end_line: 260, append: true }],
      bash: `sed -i '260s|$| // reviewed|' ${doc}`,
    },
    { aci: ["bash", { command: node }], bash: node },
    { aci: ["find_file", { file_name: "composer.js" }], bash: "find . -name composer.js" },
    { aci: ["open", { path: composer }], bash: `cat ${composer}` },
    { aci: ["search_file", { search_term: "onError" }], bash: `grep -n onError ${composer}` },
    { aci: ["goto", { line_number: 100 }], bash: `sed -n '85,184p' ${composer}` },
    { aci: ["scroll_down", {}], bash: `sed -n '183,282p' ${composer}` },
    {
      aci: ["edit", { start_line: 190, end_line: 190, append: true }],
      bash: `sed -i '190s|$| // reviewed|' ${composer}`,
    },
    { aci: ["search_dir", { search_term: "composeDoc" }], bash: "grep -rn composeDoc ." },
    { aci: ["bash", { command: "git diff --stat" }], bash: "git diff --stat" },
    { aci: ["bash", { command: "ls dist" }], bash: "ls dist" },
    { aci: ["submit", {}], bash: "git add -A && git diff --cached" },
  ];
}

export async function obsSession(
  packageDir: string,
  start: (dir: string) => Promise<{ sandbox: Sandbox; env: Environment }>,
  tempDir: (prefix: string) => string,
) {
  const dir = path.join(tempDir("aci-bench-obs-"), "yaml");
  cpSync(packageDir, dir, { recursive: true });
  gitInit(dir);
  const aci = await start(dir);
  const shell = await start(dir);
  const aciTokens: number[] = [];
  const editTokens: number[] = [];
  const bashTokens: number[] = [];
  try {
    for (const step of steps()) {
      const [name, args] = step.aci;
      if (name === "edit") {
        const open = aci.env.state().openFile!;
        const line = (await aci.sandbox.readFile(open)).toString("utf8").split("\n")[
          (args.start_line as number) - 1
        ];
        const { append: _append, ...range } = args;
        const result = await aci.env.execute(name, { ...range, replacement_text: `${line} // reviewed` });
        aciTokens.push(tokens(result.observation));
        editTokens.push(tokens(result.observation));
      } else {
        aciTokens.push(tokens((await aci.env.execute(name, args)).observation));
      }
      bashTokens.push(tokens((await shell.sandbox.exec(step.bash)).output));
    }
  } finally {
    await Promise.all([aci.sandbox.dispose(), shell.sandbox.dispose()]);
  }
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  return {
    steps: aciTokens.length,
    aciMedian: median(aciTokens),
    bashMedian: median(bashTokens),
    aciTotal: sum(aciTokens),
    bashTotal: sum(bashTokens),
    /** Tokens of each edit's observation. */
    editTokens,
    perStep: aciTokens.map((value, index) => [value, bashTokens[index]!]),
  };
}

/** A repository with one commit of everything in `dir` (the ACI needs a base to diff against). */
export function gitInit(dir: string): void {
  const git = (...args: string[]) =>
    execFileSync(
      "git",
      ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "gc.auto=0", ...args],
      {
        cwd: dir,
        stdio: "ignore",
      },
    );
  git("init", "-q");
  git("add", "-A");
  git("commit", "-q", "-m", "bench");
}
