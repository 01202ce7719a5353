/**
 * Detection per ecosystem, run for real in the rich image (real Docker): for each fixture repository
 * under test/fixtures/toolchains, the commands detection finds from its files (the same pure function the
 * pipeline calls on the files GitHub's API gives) run in one sandbox of the rich image: every setup with
 * setup's network (the npm registry reached through this host's CA bundle, as a worker would), then,
 * with the network cut as for the agent, every test command, which must pass.
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
      for (const command of found.setup) {
        const r = await sandbox.exec(command, { cwd: name, timeoutMs: 1_500_000 });
        expect(r.exitCode, `${name} setup: ${command}\n${r.output}`).toBe(0);
      }
    }
    await sandbox.setNetwork(false);
    for (const [name, expected] of Object.entries(RUNNABLE)) {
      const test = detected.get(name)?.test ?? "";
      const r = await sandbox.exec(test, { cwd: name, timeoutMs: 1_500_000 });
      expect(r.exitCode, `${name} test: ${test}\n${r.output}`).toBe(0);
      expect(r.output, name).toMatch(expected.passes);
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
