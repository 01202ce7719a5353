/**
 * The credential scan of what a kept environment would hold outside the workspace (the workspace itself
 * is scanned on the host: worker/run/prepare/secret-scan.ts). The files setup added or changed, as the
 * Engine lists them, are searched in the committed image, before it is tagged, by a container of root
 * that can read every file (DAC_READ_SEARCH) and nothing else, without network: the secrets' forms go
 * in on its stdin (setup's container held their values already).
 */
import { type Duplex, PassThrough, Writable } from "node:stream";
import type Docker from "dockerode";
import type { KeepInput } from "../../src/shared/contracts.js";
import { SandboxError } from "../../src/shared/errors.js";
import { WORKDIR } from "./helper-scripts.js";
import { HOME, SANDBOX_PATH } from "./spec.js";

/** Mounts, never committed (tmpfs and the workspace volume), and the kernel's file systems. */
const NOT_KEPT = [WORKDIR, "/tmp", HOME, "/proc", "/sys", "/dev"];

/**
 * stdin: the number of secrets; a line per secret (its name, then each form in base64); then the
 * changed paths, NUL-separated. stdout: "name<TAB>path" per file holding a form. Regular files' contents
 * (`find -type f` follows no symlink, `grep -D skip` reads no device), and symlinks' target texts: the
 * agent reads a link with readlink, so a secret kept as a link's target is kept as surely as in a file
 * (a link's target file, when setup changed it, is one of the paths itself).
 */
const SCAN_SCRIPT = `
set -u
read -r count
declare -a secrets=()
for ((i = 0; i < count; i++)); do IFS= read -r line; secrets+=("$line"); done
cat > /tmp/.af-scan-paths
for line in "\${secrets[@]}"; do
  read -r -a words <<< "$line"
  : > /tmp/.af-scan-needles
  for form in "\${words[@]:1}"; do printf '%s' "$form" | base64 -d >> /tmp/.af-scan-needles; echo >> /tmp/.af-scan-needles; done
  xargs -0 -r sh -c 'find "$@" -maxdepth 0 -type f -print0' sh < /tmp/.af-scan-paths \\
    | xargs -0 -r grep -lsF -D skip --null -f /tmp/.af-scan-needles -- \\
    | while IFS= read -r -d '' file; do printf '%s\\t%s\\n' "\${words[0]}" "$file"; done
  xargs -0 -r sh -c 'find "$@" -maxdepth 0 -type l -print0' sh < /tmp/.af-scan-paths \\
    | while IFS= read -r -d '' link; do
        if readlink -- "$link" | grep -qsF -f /tmp/.af-scan-needles; then
          printf '%s\\t%s\\n' "\${words[0]}" "$link"
        fi
      done
done
rm -f /tmp/.af-scan-paths /tmp/.af-scan-needles
`;

type Hit = { path: string; name: string };

/** The paths setup added or changed that a commit keeps (the container is stopped: nothing changes them). */
export async function changedPaths(container: Docker.Container): Promise<string[]> {
  // The engine answers `null` for a container that changed nothing, which dockerode hands back as the
  // body's bytes (docker-modem keeps a body it cannot parse into a value): no change either way.
  const answer: unknown = await container.changes();
  const changes = (Array.isArray(answer) ? answer : []) as { Path: string; Kind: number }[];
  return changes
    .filter((change) => change.Kind !== 2)
    .map((change) => change.Path)
    .filter((path) => !NOT_KEPT.some((mount) => path === mount || path.startsWith(`${mount}/`)));
}

/** Which of `paths` (names, and files' contents in `image`) hold a secret's form. */
export async function scanImage(
  docker: Docker,
  image: string,
  paths: string[],
  secrets: KeepInput["secrets"],
): Promise<Hit[]> {
  if (secrets.length === 0 || paths.length === 0) return [];
  const hits: Hit[] = [];
  for (const { name, forms } of secrets) {
    for (const path of paths)
      if (forms.some((form) => Buffer.from(path).includes(form))) hits.push({ path, name });
  }
  const input = [
    `${secrets.length}\n`,
    ...secrets.map(
      ({ name, forms }) => `${[name, ...forms.map((form) => form.toString("base64"))].join(" ")}\n`,
    ),
    paths.join("\0"),
  ].join("");
  for (const line of (await runScan(docker, image, input)).split("\n")) {
    const tab = line.indexOf("\t");
    if (tab > 0) hits.push({ name: line.slice(0, tab), path: line.slice(tab + 1) });
  }
  const unique = new Map(hits.map((hit) => [`${hit.name}\0${hit.path}`, hit]));
  return [...unique.values()];
}

/** The scan in a container of its own: root that can read every file and do nothing else, no network. */
async function runScan(docker: Docker, image: string, input: string): Promise<string> {
  const container = await docker.createContainer({
    Image: image,
    User: "0:0",
    Entrypoint: ["bash", "--noprofile", "--norc", "-c", SCAN_SCRIPT],
    Cmd: [],
    Env: [`PATH=${SANDBOX_PATH}`, "LANG=C.UTF-8"],
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    OpenStdin: true,
    StdinOnce: true,
    Healthcheck: { Test: ["NONE"] },
    HostConfig: {
      NetworkMode: "none",
      CapDrop: ["ALL"],
      CapAdd: ["DAC_READ_SEARCH"],
      SecurityOpt: ["no-new-privileges"],
      ReadonlyRootfs: true,
      Tmpfs: { "/tmp": "rw,nosuid,nodev,size=64m" },
      LogConfig: { Type: "none", Config: {} },
    },
  });
  try {
    const stream = (await container.attach({
      stream: true,
      stdin: true,
      stdout: true,
      stderr: true,
      hijack: true,
    })) as Duplex;
    const stdout = new PassThrough();
    let text = "";
    stdout.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
    });
    docker.modem.demuxStream(stream, stdout, new Writable({ write: (_c, _e, done) => done() }));
    const ended = new Promise<void>((resolve) => {
      stream.on("end", resolve);
      stream.on("close", resolve);
    });
    await container.start();
    stream.end(input);
    const [result] = (await Promise.all([container.wait(), ended])) as [{ StatusCode: number }, unknown];
    if (result.StatusCode !== 0) {
      throw new SandboxError(`the kept environment's credential scan exited ${result.StatusCode}`, {
        code: "keep_failed",
        retryable: true,
      });
    }
    return text;
  } finally {
    await container.remove({ force: true }).catch(() => undefined); // gone already
  }
}
