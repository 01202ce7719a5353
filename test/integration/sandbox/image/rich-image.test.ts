/**
 * The rich sandbox image (sandbox/image/rich.Dockerfile, real Docker): a Go module's and a Rust crate's
 * own tests run in it with no network, passing and failing as the code says; its other toolchains are
 * there at the versions docs/operating.md's table of sandbox images gives.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerSandboxProvider } from "../../../../sandbox/docker/provider.js";
import { SANDBOX_RICH_IMAGE, SANDBOX_RICH_IMAGE_NAME } from "../../../../sandbox/version.js";
import type { Sandbox } from "../../../../src/shared/contracts.js";
import { requireSandboxImage } from "../../../support/services.js";

const available = await requireSandboxImage(SANDBOX_RICH_IMAGE);

/** A Go module and a Rust crate without dependencies, each with one test of `add`. */
const FILES: Record<string, string> = {
  "go.mod": "module example.com/calc\n\ngo 1.22\n",
  "calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
  "calc_test.go":
    'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatalf("Add(2, 3) = %d", Add(2, 3))\n\t}\n}\n',
  "crate/Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
  "crate/src/lib.rs":
    "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 3), 5);\n    }\n}\n",
};

describe.runIf(available)("the rich sandbox image", () => {
  let source: string;
  let sandbox: Sandbox;
  beforeAll(async () => {
    source = await mkdtemp(join(tmpdir(), "af-rich-"));
    for (const [path, text] of Object.entries(FILES)) {
      await mkdir(dirname(join(source, path)), { recursive: true });
      await writeFile(join(source, path), text);
    }
    sandbox = await new DockerSandboxProvider().create({
      sourceDir: source,
      jobId: "rich-image",
      image: SANDBOX_RICH_IMAGE,
    });
  }, 120_000);
  afterAll(async () => {
    await sandbox?.dispose();
    if (source) await rm(source, { recursive: true, force: true });
  });

  // The first `go test` of a sandbox links against the standard library the image compiled (GOROOT/pkg,
  // installgoroot): about 6 s of CPU instead of 35 s compiling it into $HOME's build cache.
  it("runs a Go module's tests without network: they pass, and fail once the code is wrong", async () => {
    const passing = await sandbox.exec("go test ./...", { timeoutMs: 1_500_000 });
    expect(passing.exitCode).toBe(0);
    expect(passing.output).toMatch(/^ok\s+example\.com\/calc/m);
    await sandbox.writeFile("calc.go", "package calc\n\nfunc Add(a, b int) int { return a - b }\n");
    const failing = await sandbox.exec("go test ./...", { timeoutMs: 1_500_000 });
    expect(failing.exitCode).not.toBe(0);
    expect(failing.output).toContain("Add(2, 3) = -1");
  }, 3_000_000);

  it("a rich image the engine lacks is refused with how to build that one", async () => {
    const missing = `${SANDBOX_RICH_IMAGE_NAME}:0.0.0-missing`;
    await expect(
      new DockerSandboxProvider().create({ sourceDir: source, jobId: "rich-missing", image: missing }),
    ).rejects.toMatchObject({
      code: "image_missing",
      message: `the sandbox image ${missing} is missing`,
      hint: "Build it with `npm run sandbox:image:rich` (sandbox/image/build.sh --rich).",
    });
  });

  it("runs a Rust crate's tests offline with cargo", async () => {
    const run = await sandbox.exec("cd crate && cargo test --offline", { timeoutMs: 600_000 });
    expect(run.exitCode).toBe(0);
    expect(run.output).toContain("test tests::adds ... ok");
  }, 900_000);

  it("has Node 20 or newer, Python 3, a JDK with Maven and Gradle, Ruby with bundler, and the ACI's tools", async () => {
    const run = await sandbox.exec(
      "node -p 'process.versions.node.split(\".\")[0]'; python3 -c 'import sys, venv; print(sys.version_info[0])'; " +
        "javac -version 2>&1 | cut -d' ' -f1; mvn -v -Dstyle.color=never | head -1 | sed 's/\\x1b\\[[0-9;]*m//g' | cut -d' ' -f1-2; gradle --version -q 2>/dev/null | grep -c '^Gradle'; " +
        "ruby -e 'puts RUBY_VERSION.split(\".\")[0]'; bundle --version | cut -d' ' -f1; " +
        "command -v rg git bash setpriv iptables | wc -l; ls /usr/lib/agent-fix/bin | wc -l",
      { timeoutMs: 300_000 },
    );
    const [node, python, javac, maven, gradle, ruby, bundler, tools, helpers] = run.output.trim().split("\n");
    expect(Number(node)).toBeGreaterThanOrEqual(20);
    expect([python, javac, maven, gradle, ruby, bundler, tools, helpers]).toEqual([
      "3",
      "javac",
      "Apache Maven",
      "1",
      "3",
      "Bundler",
      "5",
      "7",
    ]);
  }, 600_000);
});
