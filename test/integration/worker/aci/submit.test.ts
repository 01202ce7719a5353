/**
 * submit: the diff against the starting commit includes new and binary files, leaves out ignored
 * files and files created then removed, keeps CRLF and missing final newlines, and applies with
 * `git apply` to a fresh checkout of the base commit, taken out of the sandbox as a git bundle.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type AciSession, drivers, fixtureRepo, startSession } from "./aci-support.js";

const temps: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "aci-submit-"));
  temps.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    "git",
    ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "gc.auto=0", ...args],
    {
      cwd,
      encoding: "utf8",
    },
  );
}

/** A checkout of `base` made from the sandbox's repository through a bundle file. */
async function freshCheckout(s: AciSession, base: string): Promise<string> {
  const made = await s.sandbox.exec(
    `git tag -f aci-base ${base} >/dev/null && git bundle create -q .git/base.bundle aci-base 2>&1`,
  );
  expect(made.exitCode, made.output).toBe(0);
  const dir = tempDir();
  writeFileSync(path.join(dir, "base.bundle"), await s.sandbox.readFile(".git/base.bundle"));
  execFileSync("git", ["clone", "-q", path.join(dir, "base.bundle"), path.join(dir, "checkout")]);
  const checkout = path.join(dir, "checkout");
  git(checkout, "checkout", "-q", base);
  return checkout;
}

async function baseCommit(s: AciSession): Promise<string> {
  const result = await s.sandbox.exec("git rev-list --max-parents=0 HEAD | tail -n 1");
  return result.output.trim();
}

for (const driver of drivers) {
  describe(`submit (${driver.name} sandbox)`, async () => {
    const provider = await driver.provider();
    const sessions: AciSession[] = [];
    afterAll(async () => {
      await Promise.all(sessions.map((s) => s.sandbox.dispose()));
    });
    const start = async (
      ...args: Parameters<typeof startSession> extends [unknown, ...infer Rest] ? Rest : never
    ) => {
      const s = await startSession(provider!, ...args);
      sessions.push(s);
      return s;
    };

    it.runIf(provider)(
      "without the repository's git data nothing is submitted and the agent is told why",
      async () => {
        const s = await start();
        await s.env.execute("bash", { command: "rm -rf .git" });
        const result = await s.env.execute("submit", {});
        expect(result.submission).toBeUndefined();
        const lines = result.observation.split("\n");
        expect(lines[0]).toMatch(
          /^Error: your changes could not be turned into a diff, so nothing was submitted\. .*git/,
        );
        expect(lines[1]).toBe(
          "The repository's git data (.git) must stay intact; repair or restore it, then submit again.",
        );
      },
    );

    it.runIf(provider)("an untouched repository submits an explicit empty diff", async () => {
      const s = await start();
      const result = await s.env.execute("submit", {});
      expect(result.submission).toBe("");
      expect(result.observation.split("\n")[0]).toBe(
        "Submitted: no changes (the repository is the same as the commit you started from).",
      );
    });

    it.runIf(provider)(
      "the diff has edits, new, binary and CRLF files, not ignored or removed ones, and applies to a fresh checkout",
      async () => {
        const s = await start();
        await s.env.execute("open", { path: "src/greet.py" });
        await s.env.execute("edit", {
          start_line: 2,
          end_line: 2,
          replacement_text: '    return "Hi, " + name',
        });
        await s.env.execute("create", { filename: "src/extra.py" });
        await s.env.execute("edit", { start_line: 1, end_line: 1, replacement_text: "EXTRA = True\n" });
        await s.sandbox.writeFile("assets/logo.bin", Buffer.from([0, 1, 2, 3, 255, 0, 10]));
        await s.sandbox.writeFile("windows.txt", "one\r\ntwo\r\nno final newline");
        await s.sandbox.writeFile("build/out.txt", "generated\n");
        await s.sandbox.writeFile("debug.log", "noise\n");
        await s.env.execute("bash", {
          command:
            "echo temp > scratch.py && rm scratch.py && git rm -q --cached docs/guide.md >/dev/null; true",
        });
        await s.env.execute("bash", { command: "rm README.md" });

        const result = await s.env.execute("submit", {});
        const patch = result.submission!;
        expect(result.observation.split("\n")[0]).toBe("Submitted: 5 files changed.");
        expect(await s.env.diff()).toBe(patch);
        const files = [...patch.matchAll(/^diff --git a\/(\S+) b\//gm)].map((m) => m[1]).sort();
        expect(files).toEqual([
          "README.md",
          "assets/logo.bin",
          "src/extra.py",
          "src/greet.py",
          "windows.txt",
        ]);
        expect(patch).toContain("GIT binary patch");
        expect(patch).not.toContain("scratch.py");

        const checkout = await freshCheckout(s, await baseCommit(s));
        writeFileSync(path.join(checkout, "..", "change.patch"), patch);
        execFileSync("git", ["apply", "--check", "../change.patch"], { cwd: checkout });
        execFileSync("git", ["apply", "../change.patch"], { cwd: checkout });
        for (const file of [
          "src/greet.py",
          "src/extra.py",
          "assets/logo.bin",
          "windows.txt",
          "docs/guide.md",
        ]) {
          expect(readFileSync(path.join(checkout, file)).equals(await s.sandbox.readFile(file)), file).toBe(
            true,
          );
        }
        expect(() => readFileSync(path.join(checkout, "README.md"))).toThrow();
        expect(readFileSync(path.join(checkout, "windows.txt"), "latin1")).toBe(
          "one\r\ntwo\r\nno final newline",
        );
      },
    );

    it.runIf(provider)(
      "a git repository keeps its own HEAD as the base, and the agent's index is left alone",
      async () => {
        const source = path.join(tempDir(), "repo");
        execFileSync("cp", ["-r", fixtureRepo, source]);
        git(source, "init", "-q");
        git(source, "add", "-A");
        git(source, "commit", "-q", "-m", "upstream");
        const head = git(source, "rev-parse", "HEAD").trim();
        const s = await start({}, source);
        expect((await s.sandbox.exec("git rev-parse HEAD")).output.trim()).toBe(head);
        await s.env.execute("bash", {
          command: "echo '# more' >> docs/guide.md && echo new > staged.txt && git add staged.txt",
        });
        const patch = (await s.env.execute("submit", {})).submission!;
        expect([...patch.matchAll(/^diff --git a\/(\S+) b\//gm)].map((m) => m[1])).toEqual([
          "docs/guide.md",
          "staged.txt",
        ]);
        expect((await s.sandbox.exec("git status --porcelain")).output.trimEnd().split("\n").sort()).toEqual([
          " M docs/guide.md",
          "A  staged.txt",
        ]);
        const checkout = path.join(tempDir(), "clone");
        execFileSync("git", ["clone", "-q", source, checkout]);
        writeFileSync(path.join(checkout, "..", "change.patch"), patch);
        execFileSync("git", ["apply", "../change.patch"], { cwd: checkout });
        expect(readFileSync(path.join(checkout, "docs/guide.md"), "utf8")).toBe(
          "# Guide\n\nCall greet to say hello.\n# more\n",
        );
      },
    );
  });
}
