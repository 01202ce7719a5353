/**
 * The Sandbox contract, as one suite run against every driver with the same expectations
 * (test/integration/sandbox/local.test.ts, test/integration/sandbox/docker/provider.test.ts).
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox, SandboxCreateOptions, SandboxProvider } from "../../src/shared/contracts.js";
import { SandboxError } from "../../src/shared/errors.js";

interface ContractTarget {
  name: string;
  /** A provider whose output cap is CONTRACT_MAX_OUTPUT_CHARS. */
  provider: () => SandboxProvider;
  /** What a disposed sandbox left behind (names of containers, volumes, directories, processes): must be empty. */
  leftovers: (sandbox: Sandbox, shellPid: number) => Promise<string[]>;
  createOptions?: Partial<SandboxCreateOptions>;
}

export const CONTRACT_MAX_OUTPUT_CHARS = 2000;

/** A small repository: a text file, a nested file, a non-UTF-8 file. */
export async function makeSourceDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "agent-fix-src-"));
  await writeFile(path.join(dir, "a.txt"), "hello\n");
  await mkdir(path.join(dir, "sub"));
  await writeFile(path.join(dir, "sub", "b.txt"), "nested\n");
  await writeFile(path.join(dir, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
  return dir;
}

async function expectSandboxError(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected SandboxError ${code}`).toBeInstanceOf(SandboxError);
  expect((error as SandboxError).code).toBe(code);
}

export function sandboxContract(target: ContractTarget): void {
  describe(`Sandbox contract: ${target.name}`, () => {
    let source: string;
    let provider: SandboxProvider;
    let sandbox: Sandbox;
    const create = () =>
      provider.create({ sourceDir: source, jobId: "contract-test", ...target.createOptions });

    beforeAll(async () => {
      source = await makeSourceDir();
      provider = target.provider();
      sandbox = await create();
    });
    afterAll(async () => {
      await sandbox?.dispose();
      if (source) await rm(source, { recursive: true, force: true });
    });

    it("runs commands: output in write order, exit codes, the repository copied into workdir", async () => {
      expect(sandbox.driver).toBe(provider.driver);
      const r = await sandbox.exec("echo out; echo err >&2; echo out2; cat a.txt sub/b.txt; false");
      expect(r.exitCode).toBe(1);
      expect(r.output).toBe("out\nerr\nout2\nhello\nnested\n");
      expect(r.timedOut).toBe(false);
      expect(r.truncated).toBe(false);
      expect(r.oomKilled).toBe(false);
      expect(r.sessionRestarted).toBe(false);
      expect((await sandbox.exec("sh -c 'exit 7'")).exitCode).toBe(7);
      expect((await sandbox.exec("pwd")).output).toBe(`${sandbox.workdir}\n`);
      expect((await sandbox.exec("printf 'no newline'")).output).toBe("no newline");
      expect((await sandbox.exec("true")).output).toBe("");
      // An unbalanced quote is a syntax error, not a hang; the session goes on.
      const bad = await sandbox.exec("echo 'unbalanced");
      expect(bad.exitCode).toBe(2);
      expect(bad.timedOut).toBe(false);
      expect((await sandbox.exec("echo still here")).output).toBe("still here\n");
      // Commands do not read the session's input.
      expect((await sandbox.exec("cat; echo done")).output).toBe("done\n");
    });

    it("keeps cwd and exported variables between commands; cwd/env options apply to one command", async () => {
      await sandbox.exec("cd sub && export FOO='bar baz'");
      expect((await sandbox.exec('pwd; echo "$FOO"')).output).toBe(`${sandbox.workdir}/sub\nbar baz\n`);
      await sandbox.exec(`cd ${sandbox.workdir}`);
      const withOptions = await sandbox.exec('pwd; echo "$ONLY_HERE"; cd /', {
        cwd: "sub",
        env: { ONLY_HERE: "x'y\"z" },
      });
      expect(withOptions.output).toBe(`${sandbox.workdir}/sub\nx'y"z\n`);
      expect((await sandbox.exec('pwd; echo "[$ONLY_HERE]"')).output).toBe(`${sandbox.workdir}\n[]\n`);
      expect((await sandbox.exec("pwd", { cwd: "no-such-dir" })).exitCode).not.toBe(0);
      await sandbox.exec("unset FOO");
    });

    it("a timeout kills the command and every process it started; the session survives", async () => {
      await sandbox.exec("export KEEP=1");
      const started = Date.now();
      const r = await sandbox.exec("sleep 1000 & echo $! > bg.pid; sleep 1000", { timeoutMs: 1500 });
      expect(r.timedOut).toBe(true);
      expect(r.exitCode).toBe(137);
      expect(r.output).toContain("timed out after 1.5 s");
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(r.sessionRestarted).toBe(false);
      const check = await sandbox.exec(
        'p=$(cat bg.pid); s=$(cut -d" " -f3 /proc/$p/stat 2>/dev/null); rm bg.pid; if [ -z "$s" ] || [ "$s" = Z ]; then echo gone; else echo "alive $s"; fi; echo "KEEP=$KEEP"',
      );
      expect(check.output).toBe("gone\nKEEP=1\n");
    });

    it("the kill of a timed-out command ends before the next command starts, so it never hits that one", async () => {
      // The command dies in the killer's first round; the killer then scans again until it finds nothing.
      // Those scans must not overlap the next command, which they would kill ("Killed sleep 1", 137).
      const r = await sandbox.exec("sleep 1000", { timeoutMs: 1000 });
      expect(r.timedOut).toBe(true);
      const next = await sandbox.exec("sleep 1; echo survived");
      expect(next.output).toBe("survived\n");
      expect(next.exitCode).toBe(0);
    });

    it("a busy shell loop that ignores the timeout is ended by restarting the session, and says so", async () => {
      const r = await sandbox.exec("while :; do :; done", { timeoutMs: 1000 });
      expect(r.timedOut).toBe(true);
      expect(r.exitCode).toBe(137);
      expect(r.sessionRestarted).toBe(true);
      expect((await sandbox.exec("echo alive; pwd")).output).toBe(`alive\n${sandbox.workdir}\n`);
    });

    it("`exit` ends the shell: the result says so and a new session starts", async () => {
      await sandbox.exec("cd sub");
      const r = await sandbox.exec("echo bye; exit 3");
      expect(r.exitCode).toBe(3);
      expect(r.output).toBe("bye\n");
      expect(r.sessionRestarted).toBe(true);
      const next = await sandbox.exec("pwd");
      expect(next.output).toBe(`${sandbox.workdir}\n`);
      expect(next.sessionRestarted).toBe(false);
    });

    it("caps the output: keeps head and tail and says how many lines were cut", async () => {
      const r = await sandbox.exec("seq 1 100000");
      expect(r.exitCode).toBe(0);
      expect(r.truncated).toBe(true);
      expect(r.output.length).toBeLessThan(CONTRACT_MAX_OUTPUT_CHARS + 100);
      expect(r.output.startsWith("1\n2\n3\n")).toBe(true);
      expect(r.output.endsWith("99999\n100000\n")).toBe(true);
      const match = /\n\.\.\. \[(\d+) lines truncated\] \.\.\.\n/.exec(r.output);
      expect(match).not.toBeNull();
      const shown = r.output
        .replace(match![0], "\n")
        .split("\n")
        .filter((l) => l.length > 0);
      expect(shown.length + Number(match![1])).toBe(100000);
      // The shown lines are whole and consecutive at both ends.
      const head = shown.filter((_, i) => Number(shown[i]) === i + 1);
      expect(Number(shown[shown.length - 1])).toBe(100000);
      expect(head.length).toBeGreaterThan(10);
      // Bigger than the cap in one line, and a lot of output, still ends.
      const long = await sandbox.exec("head -c 5000000 /dev/zero | tr '\\0' x; echo; echo end");
      expect(long.truncated).toBe(true);
      expect(long.output.endsWith("end\n")).toBe(true);
    });

    it("reads and writes files byte-exact, non-UTF-8 included", async () => {
      const bytes = Buffer.alloc(512);
      for (let i = 0; i < bytes.length; i++) bytes[i] = i % 256;
      await sandbox.writeFile("out/deep/bin.dat", bytes);
      expect(Buffer.compare(await sandbox.readFile("out/deep/bin.dat"), bytes)).toBe(0);
      expect((await sandbox.exec("wc -c < out/deep/bin.dat")).output.trim()).toBe("512");
      expect(
        Buffer.compare(await sandbox.readFile("latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])),
      ).toBe(0);
      await sandbox.writeFile("text.txt", "héllo\nwörld\n");
      expect((await sandbox.exec("cat text.txt")).output).toBe("héllo\nwörld\n");
      expect((await sandbox.readFile(`${sandbox.workdir}/text.txt`)).toString("utf8")).toBe("héllo\nwörld\n");
      await sandbox.writeFile("empty.txt", "");
      expect((await sandbox.readFile("empty.txt")).length).toBe(0);
      const created = await sandbox.exec("printf '\\377\\376x' > made.bin");
      expect(created.exitCode).toBe(0);
      expect([...(await sandbox.readFile("made.bin"))]).toEqual([0xff, 0xfe, 0x78]);
      await expectSandboxError(sandbox.readFile("no-such-file"), "not_found");
      await expectSandboxError(sandbox.readFile("sub"), "is_directory");
      await expectSandboxError(sandbox.writeFile("sub", "x"), "is_directory");
      await expectSandboxError(sandbox.readFile("a.txt", { maxBytes: 3 }), "file_too_large");
      expect((await sandbox.readFile("a.txt", { maxBytes: Number.POSITIVE_INFINITY })).toString()).toBe(
        "hello\n",
      );
      await sandbox.exec("rm -rf out text.txt empty.txt made.bin");
    });

    it("round-trips a large binary file byte-exact, caps reads at maxBytes, and writes through an inner symlink", async () => {
      const bytes = randomBytes(700_000);
      await sandbox.writeFile("big/blob.bin", bytes);
      expect(Buffer.compare(await sandbox.readFile("big/blob.bin"), bytes)).toBe(0);
      const digest = createHash("sha256").update(bytes).digest("hex");
      expect((await sandbox.exec("sha256sum < big/blob.bin")).output.split(" ")[0]).toBe(digest);
      expect((await sandbox.readFile("big/blob.bin", { maxBytes: bytes.length })).length).toBe(bytes.length);
      const tooBig = await sandbox.readFile("big/blob.bin", { maxBytes: bytes.length - 1 }).catch((e) => e);
      expect(tooBig).toBeInstanceOf(SandboxError);
      expect((tooBig as SandboxError).code).toBe("file_too_large");
      expect((tooBig as SandboxError).message).toContain(String(bytes.length));
      expect((await sandbox.exec("ln -s sub inner2 && ln -s b.txt sub/blink")).exitCode).toBe(0);
      await sandbox.writeFile("inner2/blink", "through links\n");
      expect((await sandbox.exec("cat sub/b.txt")).output).toBe("through links\n");
      expect((await sandbox.readFile("inner2/blink")).toString()).toBe("through links\n");
      await sandbox.exec("rm -rf big inner2 sub/blink; printf 'nested\\n' > sub/b.txt");
      expect((await sandbox.readFile("sub/b.txt")).toString()).toBe("nested\n");
    });

    it("a refused write of a large file leaves the sandbox in step: the next commands and reads answer normally", async () => {
      const content = Buffer.from("echo LEAKED; ".repeat(30_000));
      await expectSandboxError(sandbox.writeFile("../escape.txt", content), "path_outside_workspace");
      await expectSandboxError(sandbox.writeFile("sub", content), "is_directory");
      expect((await sandbox.exec("echo next")).output).toBe("next\n");
      expect((await sandbox.readFile("a.txt")).toString()).toBe("hello\n");
      await sandbox.writeFile("small.txt", "ok\n");
      expect((await sandbox.readFile("small.txt")).toString()).toBe("ok\n");
      await sandbox.exec("rm -f small.txt");
    });

    it("refuses paths outside the workspace: ../, absolute paths elsewhere, symlinks that lead out", async () => {
      await expectSandboxError(sandbox.readFile("../x"), "path_outside_workspace");
      await expectSandboxError(sandbox.readFile("sub/../../a.txt"), "path_outside_workspace");
      await expectSandboxError(sandbox.readFile("/etc/passwd"), "path_outside_workspace");
      await expectSandboxError(sandbox.writeFile("../escape.txt", "x"), "path_outside_workspace");
      await expectSandboxError(sandbox.writeFile("/tmp/escape.txt", "x"), "path_outside_workspace");
      expect(
        (await sandbox.exec("ln -s /etc etclink && ln -s /nonexistent-af/target dangling && ln -s sub inner"))
          .exitCode,
      ).toBe(0);
      await expectSandboxError(sandbox.readFile("etclink/passwd"), "path_outside_workspace");
      await expectSandboxError(sandbox.writeFile("etclink/evil", "x"), "path_outside_workspace");
      await expectSandboxError(sandbox.writeFile("dangling", "x"), "path_outside_workspace");
      await expectSandboxError(sandbox.readFile("etclink"), "path_outside_workspace");
      // A symlink that stays inside is fine.
      expect((await sandbox.readFile("inner/b.txt")).toString()).toBe("nested\n");
      expect((await sandbox.exec("ls /nonexistent-af 2>/dev/null | wc -l")).output.trim()).toBe("0");
      await sandbox.exec("rm -f etclink dangling inner");
    });

    it("an AbortSignal kills the running command and disposes the sandbox", async () => {
      const other = await create();
      const pid = Number((await other.exec("echo $$")).output.trim());
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error("cancelled by test")), 500);
      const started = Date.now();
      await expectSandboxError(other.exec("sleep 1000", { signal: controller.signal }), "aborted");
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(await target.leftovers(other, pid)).toEqual([]);
      await expectSandboxError(other.exec("true"), "sandbox_disposed");
    });

    it("dispose() removes everything and is idempotent", async () => {
      const other = await create();
      const pid = Number((await other.exec("sleep 1000 & echo $$")).output.trim());
      await other.dispose();
      await other.dispose();
      expect(await target.leftovers(other, pid)).toEqual([]);
      await expectSandboxError(other.exec("true"), "sandbox_disposed");
      await expectSandboxError(other.readFile("a.txt"), "sandbox_disposed");
    });
  });
}
