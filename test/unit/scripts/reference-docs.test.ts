import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { referenceDocs } from "../../../scripts/reference-docs.js";

const ROOT = new URL("../../../", import.meta.url);
const docs = referenceDocs();

/** The rows of the Markdown tables: key or variable first, description last. */
function rows(text: string): string[][] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) =>
      line
        .slice(2, -2)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}

describe("the configuration and environment references", () => {
  it.each(Object.keys(docs))(
    "%s is what the schemas say (npm run docs:reference rewrites it)",
    async (path) => {
      const committed = await readFile(new URL(path, ROOT), "utf8").catch(() => "(missing)");
      expect(committed, `${path} is stale: run npm run docs:reference and commit the result`).toBe(
        docs[path],
      );
    },
  );

  it("describes every key and variable, and gives each its type and default", () => {
    const all = Object.values(docs).flatMap(rows);
    expect(all.length).toBeGreaterThan(100);
    const undescribed = all.filter((row) => row.length >= 4 && row.at(-1) === "").map((row) => row[0]);
    expect(undescribed, "give these a .describe() in their zod schema").toEqual([]);
    const configuration = rows(docs["docs/reference/configuration.md"]!);
    expect(configuration).toContainEqual([
      "`worker.standby.sandboxes`",
      "integer, 0 to 16",
      "`3`",
      expect.stringContaining("started ahead"),
    ]);
    expect(configuration).toContainEqual([
      "`test.command`",
      "string",
      "unset",
      expect.stringContaining("tests"),
    ]);
  });

  it("lists each variable under the process that reads it, and the ones no longer read with what replaces them", () => {
    const environment = docs["docs/reference/environment.md"]!;
    const section = (heading: string) => environment.split(`## ${heading}`)[1]?.split("\n## ")[0] ?? "";
    expect(section("The webhook server")).toContain("| `WEBHOOK_PATH` |");
    expect(section("The worker")).toContain("| `AGENT_FIX_WORKSPACE_SIZE` |");
    expect(section("Both processes")).toContain("| `AGENT_FIX_REDIS_URL` |");
    expect(section("Variables no longer read")).toContain(
      "| `AGENT_FIX_STANDBY_SANDBOXES` | `worker.standby.sandboxes` in the operator's YAML |",
    );
    expect(section("Variables no longer read")).toContain(
      "| `AGENT_FIX_WORKSPACE_TMPFS` | `AGENT_FIX_WORKSPACE_SIZE` |",
    );
  });
});
