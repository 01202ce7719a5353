import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { type ExecFailure, execInHelper } from "../../support/exec-in-helper.js";

describe("execInHelper: a command run from the helper process, as execFile runs it", () => {
  it("gives the command's stdout and stderr as bytes, with its stdin, directory and environment", async () => {
    const input = Buffer.from([0, 1, 2, 255, 10]);
    expect((await execInHelper("cat", [], { input })).stdout).toEqual(input);
    expect((await execInHelper("pwd", [], { cwd: tmpdir() })).stdout.toString().trim()).toBe(tmpdir());
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", AF_HELPER_TEST: "given" };
    const { stdout, stderr } = await execInHelper("sh", ["-c", 'echo "$AF_HELPER_TEST"; echo oops >&2'], {
      env,
    });
    expect([stdout.toString(), stderr.toString()]).toEqual(["given\n", "oops\n"]);
  });

  it("rejects a non-zero exit with its code and output, and a command that cannot start with its errno", async () => {
    const failed = (await execInHelper("sh", ["-c", "echo partial; echo why >&2; exit 3"]).catch(
      (error: unknown) => error,
    )) as ExecFailure;
    expect(failed).toBeInstanceOf(Error);
    expect([failed.code, failed.stdout.toString(), failed.stderr.toString()]).toEqual([
      3,
      "partial\n",
      "why\n",
    ]);
    expect(failed.message).toContain("why");
    const missing = (await execInHelper("no-such-command-af", []).catch(
      (error: unknown) => error,
    )) as ExecFailure;
    expect(missing.code).toBe("ENOENT");
  });

  it("answers requests side by side, each its own", async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => execInHelper("sh", ["-c", `echo ${i}`])),
    );
    expect(answers.map((a) => a.stdout.toString().trim())).toEqual(
      Array.from({ length: 20 }, (_, i) => `${i}`),
    );
  });
});
