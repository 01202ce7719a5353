import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../../../../..");
const KEYS_FILE = "src/shared/queue/keys.ts";

/** A template literal that starts with a prefix followed by ":" — how a Redis key is built by hand. */
const HAND_BUILT_KEY = /`\$\{[\w.]*prefix\}:/i;

async function sources(): Promise<string[]> {
  const found: string[] = [];
  for (const dir of ["src", "worker"]) {
    const entries = await readdir(join(ROOT, dir), { recursive: true, withFileTypes: true });
    for (const entry of entries) {
      if (entry.isFile() && entry.name.endsWith(".ts")) found.push(join(entry.parentPath, entry.name));
    }
  }
  return found;
}

describe("Redis key names", () => {
  it("are built only in src/shared/queue/keys.ts, so every key has one named builder", async () => {
    const offenders: string[] = [];
    for (const file of await sources()) {
      const path = relative(ROOT, file);
      if (path === KEYS_FILE) continue;
      const lines = (await readFile(file, "utf8")).split("\n");
      lines.forEach((line, i) => {
        if (HAND_BUILT_KEY.test(line)) offenders.push(`${path}:${i + 1}: ${line.trim()}`);
      });
    }
    // A key built elsewhere: add a named builder to src/shared/queue/keys.ts and call it instead.
    expect(offenders).toEqual([]);
  });

  it("the check itself finds a key built by hand", () => {
    const handBuilt = ["const key = `$", "{names.prefix}:$", "{names.name}:plan:$", "{id}`;"].join("");
    expect(HAND_BUILT_KEY.test(handBuilt)).toBe(true);
    expect(HAND_BUILT_KEY.test("const key = planKey(names, id);")).toBe(false);
  });
});
