/**
 * npm run bench:sandbox — what the Docker sandbox costs, against the docker command line in the same run.
 *
 *   ready_ratio         median time from nothing to a sandbox ready to run commands, with a repository of
 *                       1,000 files / 20 MB copied in, divided by `docker run --rm IMAGE true`  (goal <= 1.5)
 *   exec_ratio          median round trip of `true` through the Sandbox, divided by
 *                       `docker exec CONTAINER true` through the CLI                           (goal <= 0.25)
 *   ready_ratio_tmpfs   the same with the workspace volume on tmpfs (workspaceSize)
 *   file_roundtrip_ratio  median readFile + writeFile of a 5,000-line (~200 KB) TypeScript file through the
 *                       Sandbox, divided by `docker exec CONTAINER cat FILE` through the CLI; the local driver's
 *                       round trip is printed alongside
 *   concurrent_ready_s  wall time to bring up 8 sandboxes at once, and this process's RSS while holding them
 *   gvisor_*            on a private engine with runsc (gVisor, test/support/own-dockerd.ts) and the slim
 *                       sandbox image: `docker run --rm IMAGE true` and a sandbox ready, under runc and under
 *                       runsc, and their ratios (what AGENT_FIX_SANDBOX_RUNTIME=runsc costs at start-up)
 *   remote_*            on a private engine reached over TCP with TLS (AGENT_FIX_DOCKER_HOSTS, certificates
 *                       made now): `docker run --rm IMAGE true` and a sandbox ready through TLS, and the
 *                       sandbox ready on the same engine through its unix socket; their ratios
 *   ssh_*               the same engine reached over ssh:// (Debian's sshd in front of it, keys made now,
 *                       test/support/ssh-engine.ts): `docker run --rm IMAGE true` through the docker CLI's
 *                       ssh and a sandbox ready through dockerode's, their ratio, and against its socket
 *
 * Start-up phases (milliseconds from the start of create() to the end of each phase; they overlap) are
 * printed as medians, to show where the time goes, for runc, runsc, the remote engine (TLS, ssh) and its socket:
 * container_created (with the image's inspection), attached (the main process's stdin), started, sent
 * (the engine took the whole archive), copied (unpacked), control_shell, probes, agent_shell, ready. The
 * file shell attaches after ready (sandbox/docker/start.ts): the first readFile after ready, which waits
 * for it, is printed beside.
 * Options: --trials=N (default 5); --only=remote runs the remote engine's figures (TLS and ssh) alone. Prints figures, ratios, and one JSON line last.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import Docker from "dockerode";
import { dockerEngines } from "../sandbox/docker/engines.js";
import { type DockerSandbox, DockerSandboxProvider } from "../sandbox/docker/provider.js";
import { LocalSandboxProvider } from "../sandbox/local.js";
import { SANDBOX_IMAGE } from "../sandbox/version.js";
import type { Sandbox } from "../src/shared/contracts.js";
import { makeDockerTls } from "../test/support/docker-tls.js";
import { OwnDockerd, RUNSC_RUNTIME } from "../test/support/own-dockerd.js";
import { slimSandboxImage } from "../test/support/slim-sandbox-image.js";
import { sshClient, sshEngine } from "../test/support/ssh-engine.js";

const run = promisify(execFile);
const only = process.argv.find((a) => a.startsWith("--only="))?.split("=")[1];
const trials = Number(process.argv.find((a) => a.startsWith("--trials="))?.split("=")[1] ?? 5);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const value = await fn();
  return [performance.now() - start, value];
}

/**
 * `docker [HOST ARGS] run --rm [--runtime R] --network none IMAGE true` through the CLI, timed: the
 * baseline each sandbox start-up figure is divided by, on the same engine and through the same transport.
 */
async function dockerRunTrue(
  image: string,
  { host = [], runtime, env }: { host?: string[]; runtime?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<number> {
  const args = [...host, "run", "--rm", ...(runtime ? ["--runtime", runtime] : []), "--network", "none"];
  const [ms] = await timed(() => run("docker", [...args, image, "true"], env ? { env } : {}));
  return ms;
}

/** A sandbox of `provider` from nothing to ready, timed, its start-up phases added to `phases`; then disposed. */
async function timedReady(
  provider: DockerSandboxProvider,
  repo: string,
  jobId: string,
  phases: Record<string, number>[],
): Promise<number> {
  const [ms, sandbox] = await timed(() => provider.create({ sourceDir: repo, jobId }));
  phases.push((sandbox as DockerSandbox).startupPhases ?? {});
  await sandbox.dispose();
  return ms;
}

/** 1,000 files of ~20 KB (text that does not compress), in 40 directories: about 20 MB. */
async function makeRepository(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "agent-fix-bench-repo-"));
  for (let d = 0; d < 40; d++) {
    const sub = path.join(dir, `pkg${d}`, "src");
    await mkdir(sub, { recursive: true });
    for (let f = 0; f < 25; f++) {
      await writeFile(
        path.join(sub, `module${f}.py`),
        `# generated\nDATA = "${randomBytes(15_000).toString("base64")}"\n`,
      );
    }
  }
  return dir;
}

const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

/** A 5,000-line TypeScript file of about 200 KB, as an agent would edit. */
function typescriptFile(): string {
  return Array.from(
    { length: 5000 },
    (_, i) => `export const value${i} = compute(${i}, "${randomBytes(6).toString("hex")}"); // line ${i}`,
  ).join("\n");
}

/** Median start-up phases over the sandboxes created, in the order they end. */
function phaseLine(all: Record<string, number>[]): string {
  const names = [...new Set(all.flatMap((p) => Object.keys(p)))];
  const medians = names.map((name) => [name, median(all.map((p) => p[name] ?? 0))] as const);
  return medians
    .sort((a, b) => a[1] - b[1])
    .map(([name, ms]) => `${name} ${ms.toFixed(0)}`)
    .join(" | ");
}

async function roundTrips(sandbox: Sandbox, file: string, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const [ms] = await timed(async () => {
      const data = await sandbox.readFile(file);
      await sandbox.writeFile(file, data);
    });
    times.push(ms);
  }
  return times;
}

/**
 * Start-up under gVisor beside runc, on a private engine that has runsc (the shared one need not), with
 * the slim sandbox image under the sandbox image's name: the same image on both sides.
 */
async function gvisorCosts(repo: string): Promise<Record<string, number>> {
  const engine = await OwnDockerd.start({ runtimes: { runsc: RUNSC_RUNTIME } });
  try {
    const { image } = await slimSandboxImage();
    await engine.loadImage(image);
    const dockerRun = (runtime: string) => dockerRunTrue(image, { host: ["-H", engine.host], runtime });
    const providers = {
      runc: new DockerSandboxProvider({ docker: engine.docker, image }),
      runsc: new DockerSandboxProvider({ docker: engine.docker, image, runtime: "runsc" }),
    };
    const phases = { runc: [] as Record<string, number>[], runsc: [] as Record<string, number>[] };
    const ready = (runtime: "runc" | "runsc") =>
      timedReady(providers[runtime], repo, "bench-gvisor", phases[runtime]);
    // Warm-up of both runtimes.
    await dockerRun("runc");
    await dockerRun("runsc");
    await ready("runc");
    await ready("runsc");
    phases.runc.length = 0;
    phases.runsc.length = 0;
    const times = {
      runRunc: [] as number[],
      runRunsc: [] as number[],
      readyRunc: [] as number[],
      readyRunsc: [] as number[],
    };
    for (let i = 0; i < trials; i++) {
      times.runRunc.push(await dockerRun("runc"));
      times.runRunsc.push(await dockerRun("runsc"));
      times.readyRunc.push(await ready("runc"));
      times.readyRunsc.push(await ready("runsc"));
    }
    const m = {
      runRunc: median(times.runRunc),
      runRunsc: median(times.runRunsc),
      readyRunc: median(times.readyRunc),
      readyRunsc: median(times.readyRunsc),
    };
    console.log(`gVisor (private engine, ${image}):`);
    console.log(
      `  docker run --rm IMAGE true, runc:  median ${fmt(m.runRunc)}  [${times.runRunc.map(fmt).join(", ")}]`,
    );
    console.log(
      `  docker run --rm IMAGE true, runsc: median ${fmt(m.runRunsc)}  [${times.runRunsc.map(fmt).join(", ")}]`,
    );
    console.log(
      `  sandbox ready, runc:               median ${fmt(m.readyRunc)}  [${times.readyRunc.map(fmt).join(", ")}]`,
    );
    console.log(`    phases, runc (ms from create): ${phaseLine(phases.runc)}`);
    console.log(
      `  sandbox ready, runsc:              median ${fmt(m.readyRunsc)}  [${times.readyRunsc.map(fmt).join(", ")}]`,
    );
    console.log(`    phases, runsc (ms from create): ${phaseLine(phases.runsc)}`);
    const ratios = {
      gvisor_ready_vs_runc: m.readyRunsc / m.readyRunc,
      gvisor_ready_vs_docker_run: m.readyRunsc / m.runRunc,
      gvisor_docker_run_vs_runc: m.runRunsc / m.runRunc,
    };
    console.log(
      `  runsc ready / runc ready = ${ratios.gvisor_ready_vs_runc.toFixed(3)}; runsc ready / docker run (runc) = ${ratios.gvisor_ready_vs_docker_run.toFixed(3)}; docker run runsc / runc = ${ratios.gvisor_docker_run_vs_runc.toFixed(3)}`,
    );
    return {
      gvisor_docker_run_runc_ms: Math.round(m.runRunc),
      gvisor_docker_run_runsc_ms: Math.round(m.runRunsc),
      gvisor_ready_runc_ms: Math.round(m.readyRunc),
      gvisor_ready_runsc_ms: Math.round(m.readyRunsc),
      ...Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, Number(v.toFixed(3))])),
    };
  } finally {
    await engine.remove();
  }
}

/**
 * Start-up on an engine reached over TCP with TLS and over ssh:// (another host's, as
 * AGENT_FIX_DOCKER_HOSTS names it), each beside `docker run --rm IMAGE true` through the same transport,
 * and a sandbox ready through the engine's socket.
 */
async function remoteCosts(repo: string): Promise<Record<string, number>> {
  const certs = await mkdtemp(path.join(os.tmpdir(), "af-bench-tls-"));
  const tls = await makeDockerTls(certs);
  const [engine, client] = await Promise.all([OwnDockerd.start({ tls }), sshClient()]);
  // The docker CLI's ssh, checking the host key against the client's known_hosts as the worker does.
  const shim = await mkdtemp(path.join(os.tmpdir(), "af-bench-ssh-"));
  try {
    const ssh = await sshEngine(engine.host, client);
    const { image } = await slimSandboxImage();
    await engine.loadImage(image);
    // The worker reads its ssh agent from SSH_AUTH_SOCK (engines.ts), as the docker CLI's ssh does.
    process.env.SSH_AUTH_SOCK = client.authSock;
    const [overTls] = dockerEngines({ hosts: engine.tcpHost, tlsDir: tls.clientDir });
    const [overSsh] = dockerEngines({ hosts: ssh.host, knownHosts: client.knownHosts });
    await writeFile(
      path.join(shim, "ssh"),
      `#!/bin/sh\nexec /usr/bin/ssh -o UserKnownHostsFile=${client.knownHosts} -o StrictHostKeyChecking=yes "$@"\n`,
    );
    await chmod(path.join(shim, "ssh"), 0o755);
    const sshEnv = { ...process.env, PATH: `${shim}:${process.env.PATH}` };
    const certDir = tls.clientDir;
    const tlsHost = ["--tlsverify", `--tlscacert=${certDir}/ca.pem`, `--tlscert=${certDir}/cert.pem`].concat([
      `--tlskey=${certDir}/key.pem`,
      "-H",
      engine.tcpHost,
    ]);
    const runs = {
      tls: () => dockerRunTrue(image, { host: tlsHost }),
      ssh: () => dockerRunTrue(image, { host: ["-H", ssh.host], env: sshEnv }),
    };
    const providers = {
      tls: new DockerSandboxProvider({ docker: new Docker(overTls?.options), image }),
      ssh: new DockerSandboxProvider({ docker: new Docker(overSsh?.options), image }),
      socket: new DockerSandboxProvider({ docker: engine.docker, image }),
    };
    type Via = keyof typeof providers;
    const phases: Record<Via, Record<string, number>[]> = { tls: [], ssh: [], socket: [] };
    const ready = (via: Via) => timedReady(providers[via], repo, "bench-remote", phases[via]);
    try {
      // Warm-up of every path.
      await runs.tls();
      await runs.ssh();
      for (const via of ["tls", "ssh", "socket"] as const) await ready(via);
      for (const list of Object.values(phases)) list.length = 0;
      const times = { runTls: [], runSsh: [], tls: [], ssh: [], socket: [] } as Record<
        "runTls" | "runSsh" | Via,
        number[]
      >;
      for (let i = 0; i < trials; i++) {
        times.runTls.push(await runs.tls());
        times.runSsh.push(await runs.ssh());
        for (const via of ["tls", "ssh", "socket"] as const) times[via].push(await ready(via));
      }
      const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)])) as Record<
        keyof typeof times,
        number
      >;
      const line = (label: string, ms: number, all: number[]) =>
        console.log(`  ${label.padEnd(34)} median ${fmt(ms)}  [${all.map(fmt).join(", ")}]`);
      console.log(`remote engine over TCP with TLS and over ssh:// (private engine, ${image}):`);
      line("docker run --rm IMAGE true (TLS):", m.runTls, times.runTls);
      line("sandbox ready (TLS):", m.tls, times.tls);
      console.log(`    phases, TLS (ms from create): ${phaseLine(phases.tls)}`);
      line("docker run --rm IMAGE true (ssh):", m.runSsh, times.runSsh);
      line("sandbox ready (ssh):", m.ssh, times.ssh);
      console.log(`    phases, ssh (ms from create): ${phaseLine(phases.ssh)}`);
      line("sandbox ready (its socket):", m.socket, times.socket);
      console.log(`    phases, socket (ms from create): ${phaseLine(phases.socket)}`);
      const ratios = {
        remote_ready_ratio: m.tls / m.runTls,
        remote_ready_vs_socket: m.tls / m.socket,
        ssh_ready_ratio: m.ssh / m.runSsh,
        ssh_ready_vs_socket: m.ssh / m.socket,
      };
      console.log(
        `  TLS: ready / docker run = ${ratios.remote_ready_ratio.toFixed(3)}, ready / socket ready = ${ratios.remote_ready_vs_socket.toFixed(3)}`,
      );
      console.log(
        `  ssh: ready / docker run = ${ratios.ssh_ready_ratio.toFixed(3)}, ready / socket ready = ${ratios.ssh_ready_vs_socket.toFixed(3)}`,
      );
      return {
        remote_docker_run_ms: Math.round(m.runTls),
        remote_ready_ms: Math.round(m.tls),
        remote_ready_socket_ms: Math.round(m.socket),
        ssh_docker_run_ms: Math.round(m.runSsh),
        ssh_ready_ms: Math.round(m.ssh),
        ...Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, Number(v.toFixed(3))])),
      };
    } finally {
      await ssh.stop();
    }
  } finally {
    await client.stop();
    await engine.remove();
    await rm(certs, { recursive: true, force: true });
    await rm(shim, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  await run("docker", ["image", "inspect", SANDBOX_IMAGE]).catch(() => {
    throw new Error(`the sandbox image ${SANDBOX_IMAGE} is missing: npm run sandbox:image`);
  });
  const repo = await makeRepository();
  if (only === "remote") {
    console.log(JSON.stringify({ bench: "sandbox", trials, ...(await remoteCosts(repo)) }));
    await rm(repo, { recursive: true, force: true });
    return;
  }
  const provider = new DockerSandboxProvider();
  const tmpfsProvider = new DockerSandboxProvider({ workspaceSize: "1g" });
  const { stdout: du } = await run("du", ["-sm", repo]);
  console.log(
    `image ${SANDBOX_IMAGE}; repository ${repo}: 1000 files, ${du.split("\t")[0]} MB; ${trials} trials`,
  );

  try {
    // Warm-up: image layers and the daemon's caches, for both sides.
    await dockerRunTrue(SANDBOX_IMAGE);
    await (await provider.create({ sourceDir: repo, jobId: "bench-warmup" })).dispose();

    // --- ready -----------------------------------------------------------------------------------
    const dockerRun: number[] = [];
    const ready: number[] = [];
    const readyTmpfs: number[] = [];
    const phases: Record<string, number>[] = [];
    const phasesTmpfs: Record<string, number>[] = [];
    const firstRead: number[] = [];
    const firstFile = "pkg0/src/module0.py";
    for (let i = 0; i < trials; i++) {
      dockerRun.push(await dockerRunTrue(SANDBOX_IMAGE));
      for (const [p, times, phaseList] of [
        [provider, ready, phases],
        [tmpfsProvider, readyTmpfs, phasesTmpfs],
      ] as const) {
        const [ms, sandbox] = await timed(() => p.create({ sourceDir: repo, jobId: "bench-ready" }));
        times.push(ms);
        phaseList.push((sandbox as DockerSandbox).startupPhases ?? {});
        // The file shell attaches after "ready": what the first read waits for it is printed, not hidden.
        if (p === provider) firstRead.push((await timed(() => sandbox.readFile(firstFile)))[0]);
        await sandbox.dispose();
      }
    }
    const readyRatio = median(ready) / median(dockerRun);
    const readyTmpfsRatio = median(readyTmpfs) / median(dockerRun);
    console.log(
      `docker run --rm IMAGE true:       median ${fmt(median(dockerRun))}  [${dockerRun.map(fmt).join(", ")}]`,
    );
    console.log(
      `sandbox ready with 20 MB repo:    median ${fmt(median(ready))}  [${ready.map(fmt).join(", ")}]`,
    );
    console.log(`  phases (ms from create): ${phaseLine(phases)}`);
    console.log(
      `  first readFile after ready:     median ${fmt(median(firstRead))}  [${firstRead.map(fmt).join(", ")}]`,
    );
    console.log(
      `  same, workspace on tmpfs:       median ${fmt(median(readyTmpfs))}  [${readyTmpfs.map(fmt).join(", ")}]`,
    );
    console.log(`  phases (ms from create): ${phaseLine(phasesTmpfs)}`);
    console.log(`ready_ratio = ${readyRatio.toFixed(3)} (goal <= 1.5)`);
    console.log(`ready_ratio_tmpfs = ${readyTmpfsRatio.toFixed(3)} (goal <= 1.5)`);

    // --- exec ------------------------------------------------------------------------------------
    const sandbox = await provider.create({ sourceDir: repo, jobId: "bench-exec" });
    let execMs: number;
    let cliMs: number;
    let fileMs: number;
    let catMs: number;
    let localMs: number;
    try {
      for (let i = 0; i < 20; i++) await sandbox.exec("true");
      const perTrial: number[] = [];
      for (let t = 0; t < trials; t++) {
        const samples: number[] = [];
        for (let i = 0; i < 100; i++) samples.push((await timed(() => sandbox.exec("true")))[0]);
        perTrial.push(median(samples));
      }
      execMs = median(perTrial);
      const cli: number[] = [];
      for (let t = 0; t < Math.max(trials, 10); t++) {
        cli.push((await timed(() => run("docker", ["exec", "-u", "1000:1000", sandbox.id, "true"])))[0]);
      }
      cliMs = median(cli);
      console.log(
        `Sandbox.exec("true"):             median ${fmt(execMs)}  (medians of 100 per trial: ${perTrial.map(fmt).join(", ")})`,
      );
      console.log(`docker exec CONTAINER true (CLI): median ${fmt(cliMs)}  [${cli.map(fmt).join(", ")}]`);

      // --- file round trip ---------------------------------------------------------------------
      const source = typescriptFile();
      await sandbox.writeFile("bench/edit.ts", source);
      await roundTrips(sandbox, "bench/edit.ts", 3);
      const trips = await roundTrips(sandbox, "bench/edit.ts", Math.max(trials * 4, 20));
      fileMs = median(trips);
      const cat: number[] = [];
      for (let t = 0; t < Math.max(trials, 10); t++) {
        cat.push(
          (
            await timed(() =>
              run("docker", ["exec", "-u", "1000:1000", sandbox.id, "cat", "/workspace/bench/edit.ts"]),
            )
          )[0],
        );
      }
      catMs = median(cat);
      const localDir = await mkdtemp(path.join(os.tmpdir(), "agent-fix-bench-local-"));
      const local = await new LocalSandboxProvider({ warn: () => undefined }).create({
        sourceDir: localDir,
        jobId: "bench-local",
      });
      try {
        await local.writeFile("bench/edit.ts", source);
        localMs = median(await roundTrips(local, "bench/edit.ts", 20));
      } finally {
        await local.dispose();
        await rm(localDir, { recursive: true, force: true });
      }
      console.log(
        `file round trip (${(Buffer.byteLength(source) / 1024).toFixed(0)} KB, read + write): median ${fmt(fileMs)}  [${trips.map(fmt).join(", ")}]`,
      );
      console.log(`docker exec CONTAINER cat FILE:   median ${fmt(catMs)}  [${cat.map(fmt).join(", ")}]`);
      console.log(`local driver round trip:          median ${fmt(localMs)}`);
    } finally {
      await sandbox.dispose();
    }
    const execRatio = execMs / cliMs;
    console.log(`exec_ratio = ${execRatio.toFixed(4)} (goal <= 0.25)`);
    const fileRatio = fileMs / catMs;
    console.log(`file_roundtrip_ratio = ${fileRatio.toFixed(3)} (round trip / CLI cat)`);

    // --- 8 at once -------------------------------------------------------------------------------
    const concurrent: number[] = [];
    const rss: number[] = [];
    const rssBefore = process.memoryUsage().rss;
    for (let t = 0; t < Math.min(trials, 3); t++) {
      const [ms, sandboxes] = await timed(() =>
        Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            provider.create({ sourceDir: repo, jobId: `bench-concurrent-${i}` }),
          ),
        ),
      );
      concurrent.push(ms);
      await Promise.all(sandboxes.map((s: Sandbox) => s.exec("true")));
      rss.push(process.memoryUsage().rss);
      await Promise.all(sandboxes.map((s) => s.dispose()));
    }
    const concurrentS = median(concurrent) / 1000;
    const rssMb = median(rss) / 1024 ** 2;
    console.log(
      `8 sandboxes at once:              median ${concurrentS.toFixed(2)} s  [${concurrent.map(fmt).join(", ")}]`,
    );
    console.log(
      `worker RSS holding 8 sandboxes:   ${rssMb.toFixed(1)} MB (before: ${(rssBefore / 1024 ** 2).toFixed(1)} MB)`,
    );

    const gvisor = await gvisorCosts(repo);
    const remote = await remoteCosts(repo);

    console.log(
      JSON.stringify({
        bench: "sandbox",
        image: SANDBOX_IMAGE,
        trials,
        docker_run_ms: Math.round(median(dockerRun)),
        ready_ms: Math.round(median(ready)),
        ready_ratio: Number(readyRatio.toFixed(3)),
        first_read_ms: Math.round(median(firstRead)),
        ready_tmpfs_ms: Math.round(median(readyTmpfs)),
        ready_ratio_tmpfs: Number(readyTmpfsRatio.toFixed(3)),
        exec_ms: Number(execMs.toFixed(3)),
        docker_exec_cli_ms: Math.round(cliMs),
        exec_ratio: Number(execRatio.toFixed(4)),
        file_roundtrip_ms: Number(fileMs.toFixed(2)),
        docker_exec_cat_ms: Math.round(catMs),
        file_roundtrip_ratio: Number(fileRatio.toFixed(3)),
        local_file_roundtrip_ms: Number(localMs.toFixed(2)),
        concurrent_ready_s: Number(concurrentS.toFixed(2)),
        concurrent_rss_mb: Number(rssMb.toFixed(1)),
        ...gvisor,
        ...remote,
      }),
    );
  } finally {
    await rm(repo, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
