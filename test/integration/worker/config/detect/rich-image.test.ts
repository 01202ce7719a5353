/**
 * Detection per ecosystem, run for real in the rich image (real Docker): for each fixture repository
 * under test/fixtures/toolchains, the commands detection finds from its files (the same pure function the
 * pipeline calls on the files GitHub's API gives) run in one sandbox of the rich image: every setup with
 * setup's network (the npm registry reached through this host's CA bundle, as a worker would), then,
 * with the network cut as for the agent, every test command, which must pass; the fixtures side by side
 * (`sideBySide`), each one's commands in order.
 *
 * Python with pytest and Ruby with rake and minitest run on what the image has from Debian's packages
 * (the venv sees the system's pytest; bundler sees the system's gems), as rubygems.org is not reachable
 * from this machine. Gradle (the image's, Debian's 4.4) fetches from Maven Central, a test dependency of
 * the runtime classpath only among what it fetches. Maven runs for real in test/e2e/registry-projects
 * (commons-cli); here its wrapper's detection is checked.
 */
import { cp, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerSandboxProvider } from "../../../../../sandbox/docker/provider.js";
import { SANDBOX_RICH_IMAGE } from "../../../../../sandbox/version.js";
import type { Sandbox } from "../../../../../src/shared/contracts.js";
import { detectCommands, filesToRead } from "../../../../../worker/config/detect/index.js";
import { requireSandboxImage } from "../../../../support/services.js";
import { FIXTURES } from "../../../../support/stack-parts.js";

const ready = await requireSandboxImage(SANDBOX_RICH_IMAGE);
const HOST_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

/** Detection over a fixture directory's files, as worker/run/configure/detect.ts does over the API. */
async function detect(root: string) {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const paths = entries.filter((e) => e.isFile()).map((e) => relative(root, join(e.parentPath, e.name)));
  const contents = new Map<string, string>();
  for (const path of filesToRead(paths)) contents.set(path, await readFile(join(root, path), "utf8"));
  return detectCommands({ paths, contents });
}

/** Each runnable fixture: its ecosystems as detected, and a line its passing tests print. */
const RUNNABLE = {
  "node-npm": { ecosystems: ["node"], passes: /# pass 1/ },
  "python-unittest": { ecosystems: ["python"], passes: /Ran 1 test[\s\S]*OK/ },
  "python-pytest": { ecosystems: ["python"], passes: /3 passed/ },
  "ruby-rake": { ecosystems: ["ruby"], passes: /1 runs, 3 assertions, 0 failures, 0 errors/ },
  "go-clamp": { ecosystems: ["go"], passes: /^ok\s+example\.com\/clamp/m },
  rust: { ecosystems: ["rust"], passes: /test result: ok\. 1 passed/ },
  make: { ecosystems: ["make"], passes: /\.\/twice_test/ },
  monorepo: { ecosystems: ["python", "node"], passes: /Ran 1 test[\s\S]*OK[\s\S]*# pass 1/ },
  "gradle-junit": { ecosystems: ["java"], passes: /BUILD SUCCESSFUL/ },
} as const;

/** How one fixture's commands went: the first that failed (or the last), its exit code and its output. */
interface FixtureRun {
  command: string;
  exitCode: number;
  output: string;
}

/**
 * Each fixture's commands in its directory, in order and stopping at the first that fails (as the run's
 * setup does), the fixtures side by side: they share no directory, and most of a setup is waiting on a
 * registry. One exec starts them all in the background (the sandbox has one shell); each writes its
 * output and how it ended to /tmp, read back after.
 */
async function sideBySide(
  sandbox: Sandbox,
  step: "setup" | "test",
  jobs: [name: string, commands: readonly string[]][],
): Promise<Map<string, FixtureRun>> {
  const file = (name: string, what: "sh" | "out" | "rc") => `/tmp/af-${step}-${name}.${what}`;
  const scripts = jobs.map(([name, commands]) => {
    const lines = commands.map(
      (command, i) => `( ${command}\n) || { s=$?; echo "$s ${i}" > ${file(name, "rc")}; exit $s; }`,
    );
    const script = [
      `cd ${name} || exit 1`,
      ...lines,
      `echo "0 ${commands.length - 1}" > ${file(name, "rc")}`,
    ];
    return `cat > ${file(name, "sh")} <<'AF_SCRIPT_END'\n${script.join("\n")}\nAF_SCRIPT_END`;
  });
  const start = jobs.map(([name]) => `bash ${file(name, "sh")} > ${file(name, "out")} 2>&1 &`);
  const all = await sandbox.exec([...scripts, ...start, "wait"].join("\n"), { timeoutMs: 1_500_000 });
  expect(all.exitCode, all.output).toBe(0);
  const runs = new Map<string, FixtureRun>();
  for (const [name, commands] of jobs) {
    const ended = (await sandbox.exec(`cat ${file(name, "rc")}`)).output.trim().split(" ");
    const output = (await sandbox.exec(`cat ${file(name, "out")}`, { timeoutMs: 60_000 })).output;
    const [code, index] = ended.length === 2 ? ended.map(Number) : [Number.NaN, 0];
    runs.set(name, { command: commands[index ?? 0] ?? "", exitCode: code ?? Number.NaN, output });
  }
  return runs;
}

describe.runIf(ready)("detected commands in the rich image", () => {
  let source: string;
  let sandbox: Sandbox;
  const detected = new Map<string, Awaited<ReturnType<typeof detect>>>();
  beforeAll(async () => {
    source = await mkdtemp(join(tmpdir(), "af-detect-rich-"));
    for (const name of Object.keys(RUNNABLE)) {
      await cp(join(FIXTURES, "toolchains", name), join(source, name), { recursive: true });
      detected.set(name, await detect(join(FIXTURES, "toolchains", name)));
    }
    // The detected variables are the shell's, as a run's sandboxes get them (one cache for all).
    const vars = Object.assign({}, ...[...detected.values()].map((found) => found.env.vars));
    sandbox = await new DockerSandboxProvider({ caBundle: HOST_BUNDLE }).create({
      sourceDir: source,
      jobId: "detect-rich-image",
      image: SANDBOX_RICH_IMAGE,
      network: true,
      workspaceEnv: { vars, path: [] },
    });
  }, 300_000);
  afterAll(async () => {
    await sandbox?.dispose();
    if (source) await rm(source, { recursive: true, force: true });
  });

  it("sets up each fixture with setup's network, then its tests pass without network", async () => {
    for (const [name, expected] of Object.entries(RUNNABLE)) {
      const found = detected.get(name);
      if (!found) throw new Error(`${name} was not detected`);
      expect(
        found.parts.map((p) => p.ecosystem),
        name,
      ).toEqual(expected.ecosystems);
    }
    const names = Object.keys(RUNNABLE);
    const setups = await sideBySide(
      sandbox,
      "setup",
      names.map((name) => [name, detected.get(name)?.setup ?? []]),
    );
    for (const [name, r] of setups) expect(r.exitCode, `${name} setup: ${r.command}\n${r.output}`).toBe(0);
    await sandbox.setNetwork(false);
    const tests = await sideBySide(
      sandbox,
      "test",
      names.map((name) => [name, [detected.get(name)?.test ?? ""]]),
    );
    for (const [name, expected] of Object.entries(RUNNABLE)) {
      const r = tests.get(name);
      expect(r?.exitCode, `${name} test: ${r?.command}\n${r?.output}`).toBe(0);
      expect(r?.output, name).toMatch(expected.passes);
    }
    // Gradle ran both tests, the one needing the runtime-only dependency too (it prints no counts).
    const report = await sandbox.exec("cat gradle-junit/build/test-results/test/TEST-example.TwiceTest.xml");
    expect(report.output).toMatch(/tests="2" skipped="0" failures="0" errors="0"/);
    // The npm dependency came from the registry during setup, not from the fixture.
    expect((await sandbox.exec("cat node-npm/node_modules/is-number/package.json")).output).toContain(
      '"version": "7.0.0"',
    );
  }, 3_000_000);

  it("finds the Maven wrapper and Gradle without one (build.gradle.kts)", async () => {
    const maven = await detect(join(FIXTURES, "detect", "java-maven"));
    expect(maven.test).toBe("./mvnw -B -o test");
    const gradle = await detect(join(FIXTURES, "detect", "java-gradle"));
    expect(gradle.test).toBe("gradle --no-daemon --offline test");
    // What runs them is in the image.
    const tools = await sandbox.exec("mvn --version && gradle --version", { timeoutMs: 300_000 });
    expect(tools.exitCode, tools.output).toBe(0);
  }, 600_000);
});
