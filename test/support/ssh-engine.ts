/**
 * A Docker engine reached over SSH, as `ssh://USER@HOST` reaches one: Debian's sshd on a loopback port
 * with a host key and a client key made at test time, whose one authorized key may run nothing but
 * `docker system dial-stdio` against a private engine (own-dockerd.ts), the command dockerode's SSH
 * transport runs (docker-modem lib/ssh.js). The client's key is in an ssh agent of its own, as
 * docs/operating.md has the worker hold it (SSH_AUTH_SOCK). sshd must be installed (.ci/services
 * installs openssh-server): a machine without it fails the test rather than skipping it.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { OwnDockerd } from "./own-dockerd.js";
import { freePort } from "./ports.js";

const SSHD = "/usr/sbin/sshd";

export interface SshEngine {
  /** AGENT_FIX_DOCKER_HOSTS' entry: ssh://USER@127.0.0.1:PORT. */
  host: string;
  /** The agent holding the client's key (SSH_AUTH_SOCK). */
  authSock: string;
  /** A known_hosts file holding its host key, as ssh-keyscan writes it (AGENT_FIX_DOCKER_SSH_KNOWN_HOSTS). */
  knownHosts: string;
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

/** sshd in front of `engine`; throws, saying what to install, when this machine has no sshd. */
export async function sshEngine(engine: OwnDockerd): Promise<SshEngine> {
  if (!existsSync(SSHD))
    throw new Error(`${SSHD} is missing: install openssh-server (.ci/services does) to test ssh:// engines`);
  const dir = await mkdtemp(join(tmpdir(), "af-ssh-"));
  const children: ChildProcess[] = [];
  const stop = async () => {
    for (const child of children) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const keygen = (file: string) =>
      execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "agent-fix test", "-f", file]);
    keygen(join(dir, "host_key"));
    keygen(join(dir, "client_key"));
    const key = (await readFile(join(dir, "client_key.pub"), "utf8")).trim();
    // The key may do one thing: relay the engine's API (no shell, no forwarding).
    const forced = `command="docker --host ${engine.host} system dial-stdio",restrict`;
    await writeFile(join(dir, "authorized_keys"), `${forced} ${key}\n`, { mode: 0o600 });
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
    const authSock = join(dir, "agent.sock");
    const agent = spawn("ssh-agent", ["-D", "-a", authSock], { stdio: "ignore" });
    children.push(agent);
    for (let i = 0; i < 100 && !(existsSync(authSock) && (await listening(port))); i++) {
      if (sshd.exitCode !== null) throw new Error(`sshd exited ${sshd.exitCode}: ${said}`);
      await sleep(50);
    }
    if (!(await listening(port))) throw new Error(`sshd did not listen on ${port}: ${said}`);
    execFileSync("ssh-add", ["-q", join(dir, "client_key")], {
      env: { ...process.env, SSH_AUTH_SOCK: authSock },
      stdio: "pipe",
    });
    const [type, blob] = (await readFile(join(dir, "host_key.pub"), "utf8")).split(" ");
    const knownHosts = join(dir, "known_hosts");
    await writeFile(knownHosts, `[127.0.0.1]:${port} ${type} ${blob}\n`);
    return { host: `ssh://${userInfo().username}@127.0.0.1:${port}`, authSock, knownHosts, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
