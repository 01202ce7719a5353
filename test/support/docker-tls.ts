/**
 * A remote Docker engine's TLS for tests: a throwaway CA, the engine's server certificate (127.0.0.1)
 * and a client's, made with openssl at test time (never committed), laid out as Docker reads them:
 * the client's directory holds ca.pem, cert.pem and key.pem (DOCKER_CERT_PATH). And the way to reach
 * an engine's TCP port that lives in its own network namespace (own-dockerd.ts): a byte forwarder
 * inside it (nsenter) behind a unix socket, and a loopback port here in front of that socket. The
 * bytes pass untouched, so the TLS handshake is the client's with dockerd itself.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export interface DockerTls {
  ca: string;
  serverCert: string;
  serverKey: string;
  /** ca.pem, cert.pem and key.pem of a client the engine accepts (AGENT_FIX_DOCKER_TLS_DIR). */
  clientDir: string;
}

const words = (text: string) => text.split(" ");
const EC_KEY = words("-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes");

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
}

/** A certificate `name` signed by the CA in `dir`, for `usage` (serverAuth or clientAuth). */
async function signed(dir: string, name: string, subject: string, extensions: string[]): Promise<void> {
  openssl(dir, [...words(`req -keyout ${name}-key.pem -out ${name}.csr`), ...EC_KEY, "-subj", subject]);
  await writeFile(
    join(dir, `${name}.ext`),
    [...extensions, "basicConstraints=critical,CA:FALSE", ""].join("\n"),
  );
  openssl(
    dir,
    words(
      `x509 -req -in ${name}.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out ${name}.pem -days 1 -extfile ${name}.ext`,
    ),
  );
}

/** A CA, the engine's certificate and a client's, in `dir`. */
export async function makeDockerTls(dir: string): Promise<DockerTls> {
  openssl(dir, [
    ...words("req -x509 -keyout ca-key.pem -out ca.pem -days 1"),
    ...EC_KEY,
    ...["-subj", "/CN=agent-fix throwaway engine CA"],
    ...words("-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign"),
  ]);
  await signed(dir, "server", "/CN=127.0.0.1", [
    "subjectAltName=IP:127.0.0.1",
    "extendedKeyUsage=serverAuth",
  ]);
  await signed(dir, "client", "/CN=agent-fix worker", ["extendedKeyUsage=clientAuth"]);
  const clientDir = join(dir, "client");
  await mkdir(clientDir);
  execFileSync("cp", [join(dir, "ca.pem"), join(clientDir, "ca.pem")]);
  execFileSync("cp", [join(dir, "client.pem"), join(clientDir, "cert.pem")]);
  execFileSync("cp", [join(dir, "client-key.pem"), join(clientDir, "key.pem")]);
  return {
    ca: join(dir, "ca.pem"),
    serverCert: join(dir, "server.pem"),
    serverKey: join(dir, "server-key.pem"),
    clientDir,
  };
}

export interface TcpForward {
  /** The loopback port here that reaches the engine's port. */
  port: number;
  /**
   * From now on no byte passes either way and new connections are taken and held: what a worker sees of
   * an engine whose host vanished or whose network dropped (nothing refuses, nothing answers).
   */
  silence(): void;
  close(): Promise<void>;
}

/** In the network namespace: a unix socket whose connections go to 127.0.0.1:PORT. */
const INNER = `
const net = require("node:net");
const [socket, port] = process.argv.slice(1);
net.createServer({ allowHalfOpen: true }, (c) => { const u = net.connect({ port: Number(port), host: "127.0.0.1", allowHalfOpen: true }); c.pipe(u).pipe(c);
  u.on("error", () => c.destroy()); c.on("error", () => u.destroy()); }).listen(socket);
`;

/**
 * 127.0.0.1:PORT of the network namespace of process `pid`, reachable on a loopback port here: `local`
 * when given (an engine restarted keeps its address, as a host's does), else a free one.
 */
export async function forwardTcp(pid: number, dir: string, port: number, local = 0): Promise<TcpForward> {
  const socket = join(dir, "tcp-forward.sock");
  // `unshare --net` leaves the namespace's loopback down: dockerd listens on it, nothing reaches it.
  execFileSync("nsenter", [`--net=/proc/${pid}/ns/net`, "ip", "link", "set", "lo", "up"]);
  const inner: ChildProcess = spawn(
    "nsenter",
    [`--net=/proc/${pid}/ns/net`, process.execPath, "-e", INNER, socket, String(port)],
    { stdio: "ignore" },
  );
  for (let i = 0; i < 100 && !existsSync(socket); i++) {
    if (inner.exitCode !== null)
      throw new Error(`the forwarder into dockerd's namespace exited ${inner.exitCode}`);
    await sleep(50);
  }
  const open = new Map<Socket, Socket | null>();
  let silent = false;
  // Half-open both ways: a sandbox's copy ends its input (stdin's end) and still reads the container's output.
  const outer: Server = createServer({ allowHalfOpen: true }, (client) => {
    client.on("close", () => open.delete(client));
    client.on("error", () => undefined);
    if (silent) {
      open.set(client, null); // taken, never answered
      client.pause();
      return;
    }
    const upstream = connect({ path: socket, allowHalfOpen: true });
    open.set(client, upstream);
    client.pipe(upstream).pipe(client);
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((done, fail) => outer.once("error", fail).listen(local, "127.0.0.1", done));
  return {
    port: (outer.address() as AddressInfo).port,
    silence: () => {
      silent = true;
      for (const [client, upstream] of open) {
        client.unpipe();
        upstream?.unpipe();
        client.pause();
        upstream?.pause();
      }
    },
    close: async () => {
      inner.kill("SIGTERM");
      for (const [client, upstream] of open) {
        client.destroy();
        upstream?.destroy();
      }
      await new Promise<void>((done) => outer.close(() => done()));
      execFileSync("rm", ["-f", socket]);
    },
  };
}
