/**
 * Runs a command, as `execFile` does, from a small helper process of the test process's own, so that
 * the stand-ins' git commands cost the test process a message rather than a spawn. Node 20 spawns with
 * fork(): the calling thread waits while the kernel copies the page tables of the whole process, and a
 * vitest worker that has run many files holds hundreds of MB (a spawn there blocked its event loop 9 ms
 * at 150-200 MB, 30-50 ms at 300-450 MB; the helper, about 40 MB, spawns in a few ms, beside the event
 * loop of the test). One helper a process, started on first use, gone with the process (it exits when
 * its channel closes). Output is whole, as execFile's.
 */
import { type ChildProcess, spawn } from "node:child_process";

interface Request {
  id: number;
  file: string;
  args: string[];
  cwd: string | undefined;
  env: NodeJS.ProcessEnv;
  input: Uint8Array | undefined;
}

interface Reply {
  id: number;
  code: number | null;
  signal: string | null;
  stdout: Uint8Array;
  stderr: Uint8Array;
  /** Why the command could not start (no such file, no such directory). */
  error: string | undefined;
}

/** The helper: a plain CommonJS script, so that it loads none of vitest's or the project's modules. */
const HELPER = `
const { spawn } = require("node:child_process");
process.on("message", (request) => {
  const out = [];
  const err = [];
  let error;
  const reply = (code, signal) =>
    process.send({ id: request.id, code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err), error });
  let child;
  try {
    child = spawn(request.file, request.args, { cwd: request.cwd, env: request.env, stdio: "pipe" });
  } catch (thrown) {
    error = String(thrown);
    return reply(null, null);
  }
  child.stdout.on("data", (chunk) => out.push(chunk));
  child.stderr.on("data", (chunk) => err.push(chunk));
  child.stdin.on("error", () => {});
  child.on("error", (thrown) => { error = String(thrown); });
  child.on("close", reply);
  child.stdin.end(request.input ? Buffer.from(request.input) : undefined);
});
process.on("disconnect", () => process.exit(0));
`;

/** What a command that exited non-zero (or did not start) rejects with: execFile's fields. */
export interface ExecFailure extends Error {
  code: number | string | null;
  signal: string | null;
  stdout: Buffer;
  stderr: Buffer;
}

let helper: ChildProcess | undefined;
let nextId = 1;
const pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();

function helperProcess(): ChildProcess {
  if (helper?.connected) return helper;
  const child = spawn(process.execPath, ["-e", HELPER], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    serialization: "advanced",
  });
  child.on("message", (reply: Reply) => {
    const waiting = pending.get(reply.id);
    pending.delete(reply.id);
    if (pending.size === 0) child.channel?.unref();
    waiting?.resolve(reply);
  });
  child.on("exit", (code, signal) => {
    if (helper === child) helper = undefined;
    for (const [id, waiting] of pending) {
      pending.delete(id);
      waiting.reject(new Error(`the exec helper exited (${signal ?? code}) before it answered`));
    }
  });
  // Idle, the helper keeps neither the test process alive nor itself: it exits with its channel.
  child.unref();
  child.channel?.unref();
  helper = child;
  return child;
}

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * `file args` in `cwd` with `env` (the test process's own by default) and `input` on its stdin: its
 * stdout and stderr once it exited 0; else an `ExecFailure` with its exit code (a string such as
 * ENOENT when it did not start), as execFile rejects.
 */
export async function execInHelper(
  file: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: Uint8Array } = {},
): Promise<{ stdout: Buffer; stderr: Buffer }> {
  const child = helperProcess();
  const id = nextId++;
  const request: Request = {
    id,
    file,
    args,
    cwd: options.cwd,
    env: options.env ?? process.env,
    input: options.input,
  };
  const reply = await new Promise<Reply>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    child.channel?.ref();
    child.send(request, (error) => {
      if (!error) return;
      pending.delete(id);
      reject(error);
    });
  });
  const stdout = asBuffer(reply.stdout);
  const stderr = asBuffer(reply.stderr);
  if (reply.code === 0) return { stdout, stderr };
  const failure = new Error(
    `Command failed: ${file} ${args.join(" ")}\n${reply.error ?? stderr.toString("utf8")}`,
  ) as ExecFailure;
  failure.code = reply.error ? (/\b(E[A-Z]+)\b/.exec(reply.error)?.[1] ?? null) : reply.code;
  failure.signal = reply.signal;
  failure.stdout = stdout;
  failure.stderr = stderr;
  throw failure;
}
