/**
 * The Docker engines a worker's sandboxes run on, from the operator's deployment settings
 * (AGENT_FIX_DOCKER_HOSTS, AGENT_FIX_DOCKER_TLS_DIR, AGENT_FIX_DOCKER_INSECURE_TCP), following Docker's
 * own conventions: DOCKER_HOST's address forms, and DOCKER_CERT_PATH's ca.pem, cert.pem and key.pem.
 * A bad entry is refused here, at start, saying what is wrong and how to fix it: an engine's socket or
 * TLS key is root on its host, so a TCP engine without TLS is refused unless the operator says so, and an
 * SSH engine's host key must be in known_hosts, checked at every connection as ssh checks it (ssh2
 * accepts any host key otherwise: whoever answered at that address would get the runs' repositories).
 */
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Agent } from "node:http";
import { homedir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import { ConfigError } from "../../src/shared/errors.js";
import { sshHttpAgent } from "./ssh-http-agent.js";

/** dockerode's options, with the HTTP agent docker-modem reads (lib/modem.js) and dockerode's types leave out. */
type EngineOptions = Docker.DockerOptions & { agent?: Agent };

/** One engine: a name for logs and health (its address without credentials), and dockerode's options. */
interface DockerEngine {
  readonly name: string;
  readonly options: EngineOptions;
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
  /** OpenSSH's known_hosts file of the ssh:// engines' host keys; default ~/.ssh/known_hosts. */
  knownHosts?: string | undefined;
  /** The variable `hosts` came from, for the errors; default AGENT_FIX_DOCKER_HOSTS. */
  variable?: EngineVariable;
}

/** Where the engines are named: the worker's own list, or one ssh:// engine as the docker CLI's DOCKER_HOST. */
type EngineVariable = "AGENT_FIX_DOCKER_HOSTS" | "DOCKER_HOST";

/** Docker's default TLS port; 2375 is its plain-text one. */
const DOCKER_TLS_PORT = 2376;
const TLS_FILES = ["ca.pem", "cert.pem", "key.pem"] as const;

function refuse(variable: EngineVariable, entry: string, what: string, hint: string): never {
  throw new ConfigError(`${variable}: ${JSON.stringify(entry)} ${what}`, {
    code: "config_invalid",
    hint,
  });
}

/** The engines `settings` name, in order; an error for the first bad entry. */
export function dockerEngines(
  settings: DockerEngineSettings,
  read: (file: string) => Buffer = readFileSync,
): DockerEngine[] {
  const variable = settings.variable ?? "AGENT_FIX_DOCKER_HOSTS";
  const entries = settings.hosts
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  if (entries.length === 0)
    throw new ConfigError(`${variable} names no engine`, {
      code: "config_invalid",
      hint: "Give one or more DOCKER_HOST addresses, comma-separated (tcp://10.0.0.5:2376,ssh://agent@host), or unset it to use this host's engine.",
    });
  const engines = entries.map((entry) => dockerEngine(entry, variable, settings, read));
  const names = new Set<string>();
  for (const engine of engines) {
    if (names.has(engine.name)) refuse(variable, engine.name, "is named twice", "Name each engine once.");
    names.add(engine.name);
  }
  return engines;
}

function dockerEngine(
  entry: string,
  variable: EngineVariable,
  settings: DockerEngineSettings,
  read: (file: string) => Buffer,
): DockerEngine {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return refuse(
      variable,
      entry,
      "is not an address",
      "Write it as Docker's DOCKER_HOST: unix:///var/run/docker.sock, tcp://HOST:2376 or ssh://USER@HOST.",
    );
  }
  switch (url.protocol) {
    case "unix:":
      if (!url.pathname || url.pathname === "/")
        refuse(
          variable,
          entry,
          "names no socket",
          "Write unix:///var/run/docker.sock (three slashes, then the path).",
        );
      return {
        name: `unix://${url.pathname}`,
        options: { socketPath: url.pathname },
        remote: false,
        cli: `docker --host unix://${url.pathname}`,
      };
    case "ssh:": {
      if (!url.hostname) refuse(variable, entry, "names no host", "Write ssh://USER@HOST[:PORT].");
      if (url.password)
        refuse(
          variable,
          entry,
          "holds a password",
          "Use a key (the worker's ssh agent, SSH_AUTH_SOCK) rather than a password in the address.",
        );
      const port = url.port ? Number(url.port) : 22;
      const name = `ssh://${url.username ? `${url.username}@` : ""}${url.hostname}:${port}`;
      const hostKeys = sshHostKeys(variable, entry, url.hostname, port, settings.knownHosts, read);
      const sshOptions = {
        host: url.hostname,
        port,
        ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
        // The key stays in the worker's ssh agent, never in the settings.
        ...(process.env.SSH_AUTH_SOCK ? { agent: process.env.SSH_AUTH_SOCK } : {}),
        hostVerifier: (key: Buffer) => hostKeys.some((known) => known.equals(key)),
      };
      return {
        name,
        remote: true,
        cli: `docker --host ${name}`,
        options: {
          // HTTP through channels of shared SSH connections (ssh-http-agent.ts), not docker-modem's
          // `protocol: "ssh"`, which logs in again for every call.
          protocol: "http",
          host: url.hostname,
          port,
          agent: sshHttpAgent(sshOptions),
          sshOptions, // what the agent connects with, as docker-modem names them (unused by it over http)
        },
      };
    }
    case "tcp:": {
      if (!url.hostname) refuse(variable, entry, "names no host", "Write tcp://HOST:2376.");
      if (url.username || url.password)
        refuse(
          variable,
          entry,
          "holds credentials",
          "A TCP engine authenticates by TLS client certificate, not in the address.",
        );
      const port = url.port ? Number(url.port) : DOCKER_TLS_PORT;
      const name = `tcp://${url.host.includes(":") ? url.host : `${url.hostname}:${port}`}`;
      if (!settings.tlsDir) {
        if (!settings.insecureTcp)
          refuse(
            variable,
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
        variable,
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

/**
 * The host keys `known` (OpenSSH's known_hosts, default ~/.ssh/known_hosts) lists for `host` on `port`,
 * by plain or hashed name (`[host]:port` off port 22, as ssh writes it); refused when there is none.
 */
function sshHostKeys(
  variable: EngineVariable,
  entry: string,
  host: string,
  port: number,
  known: string | undefined,
  read: (file: string) => Buffer,
): Buffer[] {
  const file = known ?? join(homedir(), ".ssh", "known_hosts");
  const name = port === 22 ? host : `[${host}]:${port}`;
  let text = "";
  try {
    text = read(file).toString("utf8");
  } catch {
    // No file: no key known, refused below with how to add one.
  }
  const keys: Buffer[] = [];
  for (const line of text.split("\n")) {
    const [names = "", , key] = line.trim().split(/\s+/);
    // Comments, and markers (@cert-authority, @revoked) this check does not read.
    if (!key || names.startsWith("#") || names.startsWith("@")) continue;
    if (names.startsWith("|1|") ? hashedName(names, name) : names.split(",").includes(name))
      keys.push(Buffer.from(key, "base64"));
  }
  if (keys.length === 0)
    refuse(
      variable,
      entry,
      `has no host key in ${file}`,
      `The worker checks the engine host's key as ssh does: add it with \`ssh-keyscan -p ${port} ${host} >> ${file}\` and compare its fingerprint (ssh-keygen -lf ${file}) with the host's own, or name another file with AGENT_FIX_DOCKER_SSH_KNOWN_HOSTS.`,
    );
  return keys;
}

/** Whether a hashed known_hosts name (|1|salt|hash, HMAC-SHA1 of the name keyed by the salt) is `name`'s. */
function hashedName(hashed: string, name: string): boolean {
  const [, , salt = "", hash = ""] = hashed.split("|");
  return createHmac("sha1", Buffer.from(salt, "base64")).update(name).digest("base64") === hash;
}
