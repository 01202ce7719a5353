/**
 * Copies the repository into a new sandbox: a tar stream into the stdin of the container's main process
 * (sandbox/docker/spec.ts), which unpacks it, says so, then becomes `sleep`.
 */
import { spawn, spawnSync } from "node:child_process";
import { type Duplex, type Readable, Writable } from "node:stream";
import type Docker from "dockerode";
import { pack } from "tar-fs";
import { SandboxError } from "../../src/shared/errors.js";
import { containerDown } from "./engine-fault.js";
import { WORKDIR } from "./helper-scripts.js";

/**
 * A tar stream of a directory: the host's GNU tar where there is one (about 30 times faster than tar-fs
 * on a repository of 1,000 files), else tar-fs.
 */
function packDirectory(dir: string, fail: (error: Error) => void): Readable {
  if (hostTar === undefined) {
    hostTar = spawnSync("tar", ["--version"], { encoding: "utf8" }).stdout?.includes("GNU tar") ?? false;
  }
  if (!hostTar) {
    const archive = pack(dir);
    archive.on("error", fail);
    return archive as unknown as Readable;
  }
  const child = spawn("tar", ["-c", "-f", "-", "--warning=no-file-changed", "-C", dir, "."], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-2000);
  });
  child.on("error", fail);
  child.on("close", (code) => {
    // 1 is GNU tar's "a file changed as we read it": the archive is whole, and the change is the host's.
    if (code !== 0 && code !== 1)
      fail(new SandboxError(`cannot pack ${dir}: ${stderr.trim()}`, { code: "copy_failed" }));
  });
  return child.stdout;
}
let hostTar: boolean | undefined;

/** The unpacking tar's record, in 512-byte blocks: 1 MiB. */
const UNPACK_BLOCKS = 2048;

const COPY_DONE = "__AF_COPY_DONE__";
const COPY_FAILED = "__AF_COPY_FAILED__";

/**
 * The main process's script. From a kept environment's image, the workspace files setup produced come
 * from the image itself (`keptWorkspace`, its own layer) before the host's tar is unpacked over them: the
 * host sends only the checkout, and nothing is extracted on the host (worker/run/prepare/warm-start.ts).
 */
export function copyThenSleep(keptWorkspace?: string): string {
  // 1 MiB records (-b 2048): tar reads its stdin a record at a time, waking once a MiB rather than
  // every 10 KiB; on a busy host the copy is then about twice as fast (each wake-up waits for a CPU).
  const unpack = `tar -x -p -b ${UNPACK_BLOCKS} -f - -C ${WORKDIR} 2>&1`;
  const copy = keptWorkspace
    ? `{ [ ! -d ${keptWorkspace} ] || cp -a ${keptWorkspace}/. ${WORKDIR}/ 2>&1; } && ${unpack}`
    : unpack;
  return `if ${copy}; then echo ${COPY_DONE}; else echo ${COPY_FAILED}; fi; exec sleep infinity`;
}

/** The stdin of a container's main process, attached before its start: the repository goes in by send(). */
export interface CopyChannel {
  /**
   * Streams `sourceDir` in as a tar; resolves once it is unpacked (`sent` is called once the engine has
   * taken the whole archive). Called once. Rejects at once when the copy can no longer succeed (the
   * container ended, or a kept environment's files did not copy).
   */
  send(sourceDir: string, sent?: () => void): Promise<void>;
}

/**
 * Attaches to the main process (before the start, so that the host can read files while the container
 * starts, or so that a standby container waits for a repository: sandbox/docker/standby.ts).
 */
export async function openCopyChannel(docker: Docker, container: Docker.Container): Promise<CopyChannel> {
  const stream = (await container.attach({
    stream: true,
    stdin: true,
    stdout: true,
    stderr: true,
    hijack: true,
  })) as Duplex;
  let settled = false;
  let finish: (error?: Error) => void = () => undefined;
  const unpacked = new Promise<void>((resolve, reject) => {
    finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      stream.destroy();
      if (error) reject(error);
      else resolve();
    };
  });
  unpacked.catch(() => undefined); // read through send()
  let text = "";
  const sink = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      text = (text + chunk.toString("utf8")).slice(-4000);
      if (text.includes(COPY_DONE)) finish();
      else if (text.includes(COPY_FAILED)) {
        const message = text.replace(COPY_FAILED, "").trim();
        finish(new SandboxError(`cannot copy the repository in: ${message}`, { code: "copy_failed" }));
      }
      done();
    },
  });
  docker.modem.demuxStream(stream, sink, sink);
  stream.on("error", (error: Error) => finish(error));
  const ended = () => {
    if (settled) return;
    // Ended early: ask the engine why (it stopped the container, or is gone), for engine-fault.ts.
    void containerDown(container).then((why) =>
      finish(
        new SandboxError(`the sandbox ended while the repository was copied in${why ? `: ${why}` : ""}`, {
          code: "copy_failed",
        }),
      ),
    );
  };
  // "close" too: a standby's connection cut by an engine restart may close without ending.
  stream.on("end", ended);
  stream.on("close", ended);
  return {
    send: (sourceDir, sent) => {
      if (settled) return unpacked;
      if (sent) stream.once("finish", sent);
      const archive = packDirectory(sourceDir, finish);
      archive.pipe(stream);
      // A copy that failed leaves no packer waiting on a stream nobody reads (tar ends on its broken pipe).
      unpacked.catch(() => archive.destroy());
      return unpacked;
    },
  };
}
