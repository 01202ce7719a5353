import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildSources } from "../../support/built-sources.js";

// A root of its own with the three source folders, built as the e2e project's global setup builds the
// repository's (test/support/global-setup.ts).
const roots: string[] = [];
async function root(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "af-built-sources-"));
  roots.push(dir);
  for (const sub of ["src", "worker/run", "sandbox"]) await mkdir(join(dir, sub), { recursive: true });
  await writeFile(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  await writeFile(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { target: "ES2023" } }));
  await writeFile(join(dir, "src/shared.ts"), 'export const greeting: string = "hello";\n');
  await writeFile(
    join(dir, "worker/run/fail.ts"),
    [
      'import { greeting } from "../../src/shared.js";',
      "",
      "interface Said { text: string }",
      "export function fail(): Said {",
      "  throw new Error(greeting);",
      "}",
      "",
    ].join("\n"),
  );
  await writeFile(join(dir, "sandbox/types.d.ts"), "export type Nothing = never;\n");
  return dir;
}
afterEach(async () => {
  for (const dir of roots.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("buildSources", () => {
  it("builds every source once, then only what changed, and drops what was deleted", async () => {
    const dir = await root();
    expect(await buildSources(dir)).toMatchObject({ sources: 2, built: 2, removed: 0 });
    expect(await buildSources(dir)).toMatchObject({ sources: 2, built: 0, removed: 0 });

    await writeFile(join(dir, "src/shared.ts"), 'export const greeting: string = "changed";\n');
    expect(await buildSources(dir)).toMatchObject({ built: 1, removed: 0 });
    expect(await readFile(join(dir, ".test-build/src/shared.js"), "utf8")).toContain('"changed"');

    await rm(join(dir, "src/shared.ts"));
    expect(await buildSources(dir)).toMatchObject({ sources: 1, built: 0, removed: 1 });
    await expect(readFile(join(dir, ".test-build/src/shared.js"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(readFile(join(dir, ".test-build/src/shared.js.map"))).rejects.toMatchObject({
      code: "ENOENT",
    });
  });

  it("rebuilds an output deleted behind its back", async () => {
    const dir = await root();
    await buildSources(dir);
    await rm(join(dir, ".test-build/worker/run/fail.js"));
    expect(await buildSources(dir)).toMatchObject({ built: 1 });
  });

  it("keeps the modules apart, and their stack traces name the .ts lines", async () => {
    const dir = await root();
    await buildSources(dir);
    const built = await readFile(join(dir, ".test-build/worker/run/fail.js"), "utf8");
    // Not bundled: the import stays an import of the other module.
    expect(built).toContain('from "../../src/shared.js"');
    const script = `import("${join(dir, ".test-build/worker/run/fail.js")}").then((m) => m.fail())`;
    const stack = (() => {
      try {
        execFileSync(process.execPath, ["--enable-source-maps", "-e", script], { stdio: "pipe" });
        return "";
      } catch (error) {
        return String((error as { stderr: Buffer }).stderr);
      }
    })();
    expect(stack).toContain("Error: hello");
    expect(stack).toContain(`${join(dir, "worker/run/fail.ts")}:5:`);
  });
});
