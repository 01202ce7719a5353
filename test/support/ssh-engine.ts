/**
 * Docker engines reached over SSH, as `ssh://USER@HOST` reaches one. The worker's side (`sshClient`): a
 * client key made at test time in an ssh agent of its own, as docs/operating.md has the worker hold it
 * (SSH_AUTH_SOCK), and a known_hosts file. Each engine host (`sshEngine`): Debian's sshd on a loopback
 * port with a host key made at test time, added to the client's known_hosts, whose one authorized key
 * (the client's) may run nothing but `docker system dial-stdio` against the engine behind it (a private
 * one, own-dockerd.ts, or this host's), the command dockerode's SSH transport runs (docker-modem
 * lib/ssh.js). sshd must be installed (.ci/services installs openssh-server): a machine without it fails
 * the test rather than skipping it.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort } from "./ports.js";

const SSHD = "/usr/sbin/sshd";

/** The worker's side: its key in its agent, and the host keys it knows. */
export interface SshClient {
  /** The agent holding the client's key (SSH_AUTH_SOCK). */
  authSock: string;
  /** A known_hosts file holding each engine's host key, as ssh-keyscan writes it (AGENT_FIX_DOCKER_SSH_KNOWN_HOSTS). */
  knownHosts: string;
  /** The client's public key, as authorized_keys holds it. */
  publicKey: string;
  stop(): Promise<void>;
}

export interface SshEngine {
  /** AGENT_FIX_DOCKER_HOSTS' entry (or DOCKER_HOST): ssh://USER@127.0.0.1:PORT. */
  host: string;
  stop(): Promise<void>;
}

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

function keygen(file: string): void {
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "agent-fix test", "-f", file]);
}

/** Stops `children` (SIGTERM, awaited), then removes `dir`. */
async function stopAll(children: ChildProcess[], dir: string): Promise<void> {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    await exited;
  }
  await rm(dir, { recursive: true, force: true });
}

/** A client key in a fresh ssh agent, and an empty known_hosts file. */
export async function sshClient(): Promise<SshClient> {
  const dir = await mkdtemp(join(tmpdir(), "af-sshc-"));
  const children: ChildProcess[] = [];
  const stop = () => stopAll(children, dir);
  try {
    keygen(join(dir, "client_key"));
    const authSock = join(dir, "agent.sock");
    const agent = spawn("ssh-agent", ["-D", "-a", authSock], { stdio: "ignore" });
    children.push(agent);
    for (let i = 0; i < 100 && !existsSync(authSock); i++) {
      if (agent.exitCode !== null) throw new Error(`ssh-agent exited ${agent.exitCode}`);
      await sleep(20);
    }
    execFileSync("ssh-add", ["-q", join(dir, "client_key")], {
      env: { ...process.env, SSH_AUTH_SOCK: authSock },
      stdio: "pipe",
    });
    const knownHosts = join(dir, "known_hosts");
    await writeFile(knownHosts, "");
    const publicKey = (await readFile(join(dir, "client_key.pub"), "utf8")).trim();
    return { authSock, knownHosts, publicKey, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * sshd in front of the engine at `engineHost` (a DOCKER_HOST address: a private engine's socket, or
 * this host's), letting `client` in; its host key is added to the client's known_hosts. Throws, saying
 * what to install, when this machine has no sshd.
 */
export async function sshEngine(engineHost: string, client: SshClient): Promise<SshEngine> {
  if (!existsSync(SSHD))
    throw new Error(`${SSHD} is missing: install openssh-server (.ci/services does) to test ssh:// engines`);
  const dir = await mkdtemp(join(tmpdir(), "af-ssh-"));
  const children: ChildProcess[] = [];
  const stop = () => stopAll(children, dir);
  try {
    keygen(join(dir, "host_key"));
    // The key may do one thing: relay the engine's API (no shell, no forwarding).
    const forced = `command="docker --host ${engineHost} system dial-stdio",restrict`;
    await writeFile(join(dir, "authorized_keys"), `${forced} ${client.publicKey}\n`, { mode: 0o600 });
    const port = await freePort();
    await writeFile(
      join(dir, "sshd_config"),
      [
        `Port ${port}`,
        "ListenAddress 127.0.0.1",
        `HostKey ${join(dir, "host_key")}`,
        `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
        `PidFile ${join(dir, "sshd.pid")}`,
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PermitRootLogin prohibit-password",
        // The temp dir is not root's home: its modes are the test's, not sshd's to judge.
        "StrictModes no",
        "UsePAM no",
        "",
      ].join("\n"),
    );
    await mkdir("/run/sshd", { recursive: true }); // its privilege separation directory
    const sshd = spawn(SSHD, ["-D", "-e", "-f", join(dir, "sshd_config")], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    children.push(sshd);
    let said = "";
    sshd.stderr?.on("data", (chunk: Buffer) => (said = (said + chunk.toString()).slice(-2000)));
    for (let i = 0; i < 100 && !(await listening(port)); i++) {
      if (sshd.exitCode !== null) throw new Error(`sshd exited ${sshd.exitCode}: ${said}`);
      await sleep(50);
    }
    if (!(await listening(port))) throw new Error(`sshd did not listen on ${port}: ${said}`);
    const [type, blob] = (await readFile(join(dir, "host_key.pub"), "utf8")).split(" ");
    await appendFile(client.knownHosts, `[127.0.0.1]:${port} ${type} ${blob}\n`);
    return { host: `ssh://${userInfo().username}@127.0.0.1:${port}`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
