/**
 * The Docker engines a worker's sandboxes run on, from the operator's deployment settings
 * (AGENT_FIX_DOCKER_HOSTS, AGENT_FIX_DOCKER_TLS_DIR, AGENT_FIX_DOCKER_INSECURE_TCP), following Docker's
 * own conventions: DOCKER_HOST's address forms, and DOCKER_CERT_PATH's ca.pem, cert.pem and key.pem.
 * A bad entry is refused here, at start, saying what is wrong and how to fix it: an engine's socket or
 * TLS key is root on its host, so a TCP engine without TLS is refused unless the operator says so.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import { ConfigError } from "../../src/shared/errors.js";

/** One engine: a name for logs and health (its address without credentials), and dockerode's options. */
interface DockerEngine {
  readonly name: string;
  readonly options: Docker.DockerOptions;
  /**
   * Reached over a network (tcp://, ssh://): a host that vanishes there may never refuse a connection,
   * so the pool watches it (engine-pool.ts) rather than wait on a call that never ends.
   */
  readonly remote: boolean;
  /** The docker CLI's words that reach it, for the fixes a message gives (`docker --host … load`). */
  readonly cli: string;
}

interface DockerEngineSettings {
  /** Comma-separated DOCKER_HOST addresses: unix:///path, tcp://host:port, ssh://user@host[:port]. */
  hosts: string;
  /** A directory of ca.pem, cert.pem and key.pem (as DOCKER_CERT_PATH), for every tcp:// engine. */
  tlsDir?: string | undefined;
  /** Plain TCP without TLS, on purpose (a test engine on loopback); off by default. */
  insecureTcp?: boolean | undefined;
}

/** Docker's default TLS port; 2375 is its plain-text one. */
const DOCKER_TLS_PORT = 2376;
const TLS_FILES = ["ca.pem", "cert.pem", "key.pem"] as const;

function refuse(entry: string, what: string, hint: string): never {
  throw new ConfigError(`AGENT_FIX_DOCKER_HOSTS: ${JSON.stringify(entry)} ${what}`, {
    code: "config_invalid",
    hint,
  });
}

/** The engines `settings` name, in order; an error for the first bad entry. */
export function dockerEngines(
  settings: DockerEngineSettings,
  read: (file: string) => Buffer = readFileSync,
): DockerEngine[] {
  const entries = settings.hosts
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  if (entries.length === 0)
    throw new ConfigError("AGENT_FIX_DOCKER_HOSTS names no engine", {
      code: "config_invalid",
      hint: "Give one or more DOCKER_HOST addresses, comma-separated (tcp://10.0.0.5:2376,ssh://agent@host), or unset it to use this host's engine.",
    });
  const engines = entries.map((entry) => dockerEngine(entry, settings, read));
  const names = new Set<string>();
  for (const engine of engines) {
    if (names.has(engine.name)) refuse(engine.name, "is named twice", "Name each engine once.");
    names.add(engine.name);
  }
  return engines;
}

function dockerEngine(
  entry: string,
  settings: DockerEngineSettings,
  read: (file: string) => Buffer,
): DockerEngine {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return refuse(
      entry,
      "is not an address",
      "Write it as Docker's DOCKER_HOST: unix:///var/run/docker.sock, tcp://HOST:2376 or ssh://USER@HOST.",
    );
  }
  switch (url.protocol) {
    case "unix:":
      if (!url.pathname || url.pathname === "/")
        refuse(entry, "names no socket", "Write unix:///var/run/docker.sock (three slashes, then the path).");
      return {
        name: `unix://${url.pathname}`,
        options: { socketPath: url.pathname },
        remote: false,
        cli: `docker --host unix://${url.pathname}`,
      };
    case "ssh:": {
      if (!url.hostname) refuse(entry, "names no host", "Write ssh://USER@HOST[:PORT].");
      if (url.password)
        refuse(
          entry,
          "holds a password",
          "Use a key (the worker's ssh agent, SSH_AUTH_SOCK) rather than a password in the address.",
        );
      const port = url.port ? Number(url.port) : 22;
      const name = `ssh://${url.username ? `${url.username}@` : ""}${url.hostname}:${port}`;
      return {
        name,
        remote: true,
        cli: `docker --host ${name}`,
        options: {
          protocol: "ssh",
          host: url.hostname,
          port,
          ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
          // docker-modem's ssh2 agent: the key stays in the worker's ssh agent, never in the settings.
          ...(process.env.SSH_AUTH_SOCK ? { sshOptions: { agent: process.env.SSH_AUTH_SOCK } } : {}),
        },
      };
    }
    case "tcp:": {
      if (!url.hostname) refuse(entry, "names no host", "Write tcp://HOST:2376.");
      if (url.username || url.password)
        refuse(
          entry,
          "holds credentials",
          "A TCP engine authenticates by TLS client certificate, not in the address.",
        );
      const port = url.port ? Number(url.port) : DOCKER_TLS_PORT;
      const name = `tcp://${url.host.includes(":") ? url.host : `${url.hostname}:${port}`}`;
      if (!settings.tlsDir) {
        if (!settings.insecureTcp)
          refuse(
            entry,
            "is TCP without TLS, which gives anyone who reaches the port root on that host",
            "Set AGENT_FIX_DOCKER_TLS_DIR to a directory of ca.pem, cert.pem and key.pem (Docker's DOCKER_CERT_PATH), or AGENT_FIX_DOCKER_INSECURE_TCP=true for an engine only this host reaches.",
          );
        return {
          name,
          options: { protocol: "http", host: url.hostname, port },
          remote: true,
          cli: `docker --host ${name}`,
        };
      }
      const dir = settings.tlsDir;
      const [ca, cert, key] = TLS_FILES.map((file) => tlsFile(dir, file, read));
      return {
        name,
        options: { protocol: "https", host: url.hostname, port, ca, cert, key },
        remote: true,
        cli: `docker --host ${name} --tlsverify --tlscacert ${join(dir, "ca.pem")} --tlscert ${join(dir, "cert.pem")} --tlskey ${join(dir, "key.pem")}`,
      };
    }
    default:
      return refuse(
        entry,
        `has the scheme ${url.protocol.replace(/:$/, "")}, which is not an engine's`,
        "Use unix://, tcp:// (with TLS) or ssh://, as DOCKER_HOST does.",
      );
  }
}

function tlsFile(dir: string, file: string, read: (file: string) => Buffer): Buffer {
  const path = join(dir, file);
  let content: Buffer;
  try {
    content = read(path);
  } catch (error) {
    throw new ConfigError(`AGENT_FIX_DOCKER_TLS_DIR: cannot read ${path} (${(error as Error).message})`, {
      code: "config_invalid",
      hint: "The directory holds ca.pem (the engine's CA), cert.pem and key.pem (this worker's client certificate and key), as Docker's DOCKER_CERT_PATH.",
    });
  }
  if (!content.toString("utf8").includes("-----BEGIN "))
    throw new ConfigError(`AGENT_FIX_DOCKER_TLS_DIR: ${path} is not PEM`, {
      code: "config_invalid",
      hint: "Each of ca.pem, cert.pem and key.pem is a PEM file (-----BEGIN ...), as `docker --tlsverify` reads them.",
    });
  return content;
}
