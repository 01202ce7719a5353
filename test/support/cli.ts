/** `agent-fix` as a child process (tsx worker/cli.ts), as a user runs it: its exit code and output. */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const root = fileURLToPath(new URL("../../", import.meta.url));

export async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      join(root, "node_modules/.bin/tsx"),
      ["worker/cli.ts", ...args],
      {
        cwd: root,
        env: { ...process.env, OPENAI_API_KEY: "" },
        timeout: 240_000,
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    if (typeof failed.code !== "number") throw error;
    return { code: failed.code, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}
