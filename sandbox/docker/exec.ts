/**
 * The execs of a Docker sandbox: its three persistent shells (agent, root control, files) attached
 * over the Engine API, and the workspace's export through tar.
 */
import { type Duplex, PassThrough, type Readable, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import type Docker from "dockerode";
import { SandboxError } from "../../src/shared/errors.js";
import type { ShellProcess } from "../shell/session.js";
import { PRIVATE_BIN, WORKDIR } from "./helper-scripts.js";
import { SANDBOX_PATH, SANDBOX_PROCESS, SANDBOX_UID } from "./spec.js";

export const AGENT_USER = `${SANDBOX_UID}:${SANDBOX_UID}`;

/** Who a shell runs as, with what: the helper shells get a fixed environment (BASH_ENV and the like
 * of the sandbox's environment could otherwise run code in them). */
interface ShellIdentity {
  user: string;
  cmd: string[];
  env: string[];
}

/**
 * Where the file shell's binaries come from: the image's execute-only copies (PRIVATE_BIN), or, under
 * gVisor, the image's own. gVisor's loader (Debian's runsc 20221219) needs read permission to exec, so
 * the copies cannot run there (gVisor issues 160 and PR 14687); what they guard against, uid 1000 opening
 * the shell's stdin through /proc/PID/fd/0, gVisor refuses for an exec's stdin anyway (test/e2e/gvisor.test.ts).
 */
export type FileShellBinaries = "execute-only" | "image";

export function helperShells(binaries: FileShellBinaries = "execute-only"): {
  control: ShellIdentity;
  files: ShellIdentity;
} {
  const locale = ["LANG=C.UTF-8", "LC_ALL=C.UTF-8"];
  return {
    control: {
      user: "0:0",
      // Ahead of everything the agent runs: under a fork bomb, a shell of nice 0 gets one time slice in
      // hundreds and takes seconds to read the line that stops the bomb.
      cmd: ["nice", "-n", "-20", "bash", "--noprofile", "--norc"],
      env: [`PATH=${SANDBOX_PATH}`, ...locale],
    },
    files:
      binaries === "execute-only"
        ? {
            user: AGENT_USER,
            cmd: [`${PRIVATE_BIN}/bash`, "--noprofile", "--norc"],
            env: [`PATH=${PRIVATE_BIN}`, ...locale],
          }
        : {
            user: AGENT_USER,
            cmd: ["bash", "--noprofile", "--norc"],
            env: [`PATH=${SANDBOX_PATH}`, ...locale],
          },
  };
}

export async function attachShell(
  docker: Docker,
  container: Docker.Container,
  identity: ShellIdentity,
): Promise<ShellProcess> {
  const exec = await container.exec({
    ...SANDBOX_PROCESS,
    User: identity.user,
    Cmd: identity.cmd,
    Env: identity.env,
  });
  const stream = (await exec.start({ hijack: true, stdin: true })) as Duplex;
  const output = new PassThrough();
  // The shell's own stderr is dropped: each command's stderr goes to stdout inside the command line;
  // what is left there is bash's job notices ("Killed ...") about background jobs, printed late.
  const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
  docker.modem.demuxStream(stream, output, discard);
  const exited = new Promise<number | null>((resolve) => {
    let done = false;
    const finish = async () => {
      if (done) return;
      done = true;
      output.end();
      for (let i = 0; i < 10; i++) {
        try {
          const info = await exec.inspect();
          if (!info.Running) return resolve(info.ExitCode ?? null);
        } catch {
          return resolve(null); // the exec is gone with its container: exit code unknown
        }
        await sleep(20);
      }
      resolve(null);
    };
    stream.on("end", finish);
    stream.on("close", finish);
    stream.on("error", finish);
  });
  return { stdin: stream, output, exited, destroy: () => stream.destroy() };
}

/** Root setup's shell: NET_ADMIN leaves the bounding set first, so root cannot undo the egress rules. */
export const ROOT_SETUP_SHELL = [
  "setpriv",
  "--bounding-set=-net_admin",
  "--inh-caps=-all",
  "--",
  "bash",
  "--noprofile",
  "--norc",
];

/**
 * Streams `tar -c` of the workspace out of a new exec. Its exit status comes after the stream ends:
 * 0 or 1 (a file changed while read) keep the archive, anything else errors the stream.
 */
export async function exportWithTar(
  docker: Docker,
  container: Docker.Container,
  excludeDirs: readonly string[],
): Promise<Readable> {
  const excludes = [".git", ...excludeDirs].map((name) => `--exclude=${name}`);
  const exec = await container.exec({
    ...SANDBOX_PROCESS,
    AttachStdin: false,
    // The agent's uid: root here holds no capability to read the agent's files, and needs none.
    User: AGENT_USER,
    Env: [`PATH=${SANDBOX_PATH}`, "LANG=C.UTF-8"],
    Cmd: ["tar", "-c", "-f", "-", "--hard-dereference", "-C", WORKDIR, ...excludes, "."],
  });
  const stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
  const archive = new PassThrough();
  let stderr = "";
  const errors = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-2000);
      done();
    },
  });
  const tarOut = new PassThrough();
  docker.modem.demuxStream(stream, tarOut, errors);
  tarOut.pipe(archive, { end: false });
  const exitStatus = async (): Promise<number | null> => {
    // The engine marks the exec ended moments after its output ends: asked again soon at first, every
    // 20 ms after (about a second in all).
    for (let i = 0; i < 55; i++) {
      const info = await exec.inspect().catch(() => null); // gone: exit status unknown
      if (!info) return null;
      if (!info.Running) return info.ExitCode ?? null;
      await sleep(Math.min(20, 2 ** i));
    }
    return null;
  };
  tarOut.on("end", async () => {
    const status = await exitStatus();
    if (status === 0 || status === 1) return void archive.end();
    const why = stderr.trim() || `tar exited ${status}`;
    archive.destroy(
      new SandboxError(`cannot export the workspace: ${why}`, {
        code: "export_failed",
        hint: "Every file of the repository must be readable (check permissions).",
      }),
    );
  });
  stream.on("end", () => tarOut.end());
  stream.on("close", () => tarOut.end());
  stream.on("error", (error: Error) => archive.destroy(error));
  return archive;
}
