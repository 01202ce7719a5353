import { execFileSync, spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ansiC, type ShellProcess, ShellSession } from "../../sandbox/shell-session.js";

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
