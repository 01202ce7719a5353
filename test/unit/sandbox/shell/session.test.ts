import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { ansiC, type ShellProcess, ShellSession } from "../../../../sandbox/shell/session.js";

describe("ansiC", () => {
  it("quotes any text so that bash gives back the same bytes", () => {
    const samples = [
      "plain",
      'it\'s "quoted" \\ back',
      "tab\tnew\nline\r\x01\x7f",
      "$HOME `id` $(id) !x",
      "héllo ✓ 𝄞",
    ];
    for (const s of samples) {
      const out = execFileSync("bash", ["--noprofile", "--norc", "-c", `printf %s ${ansiC(s)}`]);
      expect(out.toString("utf8")).toBe(s);
    }
  });

  it("refuses NUL", () => {
    expect(() => ansiC("a\0b")).toThrow(/NUL/);
  });
});

/** A real bash over pipes, as the local driver starts it. */
function bashProcess(): ShellProcess {
  const child = spawn("bash", ["--noprofile", "--norc"], { stdio: ["pipe", "pipe", "ignore"] });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { stdin: child.stdin, output: child.stdout, exited, destroy: () => child.kill("SIGKILL") };
}

describe("ShellSession input", () => {
  it("hands the data after the command line to the command, byte for byte, and the session stays in step", async () => {
    const session = new ShellSession({ name: "test", spawn: async () => bashProcess() });
    try {
      const data = `${"x".repeat(100_000)}\n`;
      const read = await session.run(`head -c ${data.length} | wc -c`, { timeoutMs: 10_000, input: data });
      expect(read.exitCode).toBe(0);
      expect(read.output.trim()).toBe(String(data.length));
      // Without input, a command's stdin is /dev/null.
      expect((await session.run("cat; echo after", { timeoutMs: 10_000 })).output).toBe("after\n");
      // What a command leaves unread, the shell runs: the reason __af_write always reads it all.
      await session.run("true", { timeoutMs: 10_000, input: "LEFT=over\n" });
      expect((await session.run('echo "$LEFT"', { timeoutMs: 10_000 })).output).toBe("over\n");
    } finally {
      await session.close();
    }
  });
});

/** SIGKILLs the direct children of a process, as a killer's scan of /proc would. */
function killChildrenOf(pid: number): void {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(") ") + 2).split(" ")[1]) === pid)
        process.kill(Number(entry), "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

describe("ShellSession kill on timeout", () => {
  it("starts the next command only once the kill of a timed-out one has ended (a late killer hits nothing)", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "af-shell-kill-"));
    const nextStarted = path.join(dir, "next-started");
    // A killer like __af_kill on a busy machine: its first round kills the command (whose marker then
    // arrives), its later rounds come late. This one scans again once the next command has started, or
    // when it gives up waiting for that; on the old code it killed that command.
    const killChildren = async (pid: number) => {
      killChildrenOf(pid);
      for (let waited = 0; waited < 2000 && !existsSync(nextStarted); waited += 20) {
        await sleep(20);
      }
      killChildrenOf(pid);
      return true;
    };
    const session = new ShellSession({ name: "test", spawn: async () => bashProcess(), killChildren });
    try {
      const first = await session.run("sleep 1000", { timeoutMs: 200 });
      expect(first.timedOut).toBe(true);
      expect(first.sessionRestarted).toBe(false);
      const next = await session.run(`: > ${ansiC(nextStarted)}; sleep 1; echo survived`, {
        timeoutMs: 60_000,
      });
      expect(next.output).toBe("survived\n");
      expect(next.exitCode).toBe(0);
    } finally {
      await session.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
