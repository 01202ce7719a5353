/**
 * A local HTTPS server with a certificate from a throwaway test CA, made with openssl at test time in a
 * temporary directory (never committed, removed by close()): what a TLS-inspecting proxy looks like to
 * a sandbox. It answers as much of each protocol as the tools need (a page for curl, a packument for
 * npm, a simple index for pip, a dumb-HTTP git repository for git) and records every request, which
 * arrives only once the client has verified the certificate.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import os, { tmpdir } from "node:os";
import { basename, join, normalize } from "node:path";

export interface SeenRequest {
  path: string;
  userAgent: string;
}

export interface TlsStandIn {
  /** https://ADDRESS:PORT, ADDRESS being this host's own address (reachable from the setup network). */
  url: string;
  /** The port it listens on (all addresses). */
  port: number;
  /** This host's address as a /32, for the setup network's allow list. */
  cidr: string;
  /** The test CA's certificate alone (PEM file): a complete bundle for the tools that read it. */
  caFile: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

const PACKAGE = "agent-fix-probe";

/** The first IPv4 address of this host that is not loopback. */
function hostAddress(): string {
  const found = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a?.family === "IPv4" && !a.internal);
  if (!found) throw new Error("this host has no IPv4 address besides loopback");
  return found.address;
}

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
}

/** A CA and a server certificate for `address`, P-256 keys; strict verifiers (Python 3.13) need the extensions. */
async function makeCertificates(dir: string, address: string): Promise<void> {
  const words = (text: string) => text.split(" ");
  const key = words("-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes");
  openssl(dir, [
    ...words("req -x509 -keyout ca.key -out ca.crt -days 1"),
    ...key,
    ...["-subj", "/CN=agent-fix throwaway test CA"],
    ...words("-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign"),
  ]);
  openssl(dir, [...words("req -keyout server.key -out server.csr"), ...key, "-subj", "/CN=agent-fix test"]);
  await writeFile(
    join(dir, "server.ext"),
    [
      `subjectAltName=IP:${address},IP:127.0.0.1,DNS:localhost`,
      "basicConstraints=critical,CA:FALSE",
      "keyUsage=critical,digitalSignature",
      "extendedKeyUsage=serverAuth",
      "subjectKeyIdentifier=hash",
      "authorityKeyIdentifier=keyid",
      "",
    ].join("\n"),
  );
  openssl(
    dir,
    words(
      "x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 1 -extfile server.ext",
    ),
  );
}

/** A bare repository with one commit, served over git's dumb HTTP protocol (plain files). */
function makeGitRepository(dir: string): string {
  const work = join(dir, "work");
  const bare = join(dir, "repo.git");
  const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, stdio: "pipe" });
  git(dir, "init", "-q", "-b", "main", work);
  execFileSync("sh", ["-c", "echo 'cloned over verified TLS' > README.md"], { cwd: work });
  git(work, "add", "README.md");
  git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one");
  git(dir, "clone", "-q", "--bare", work, bare);
  git(bare, "update-server-info");
  return bare;
}

/** A wheel of an empty package: enough for `pip download` (made by the host's python3's zipfile). */
function makeWheel(dir: string): string {
  const name = `${PACKAGE.replace(/-/g, "_")}-1.0.0`;
  const file = join(dir, `${name}-py3-none-any.whl`);
  const script = `import sys, zipfile
z = zipfile.ZipFile(sys.argv[1], "w")
z.writestr("${PACKAGE.replace(/-/g, "_")}/__init__.py", "")
z.writestr("${name}.dist-info/METADATA", "Metadata-Version: 2.1\\nName: ${PACKAGE}\\nVersion: 1.0.0\\n")
z.writestr("${name}.dist-info/WHEEL", "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
z.writestr("${name}.dist-info/RECORD", "")
z.close()`;
  execFileSync("python3", ["-c", script, file], { stdio: "pipe" });
  return file;
}

function packument(url: string): string {
  const version = { name: PACKAGE, version: "1.0.0", dist: { tarball: `${url}/${PACKAGE}-1.0.0.tgz` } };
  return JSON.stringify({
    _id: PACKAGE,
    name: PACKAGE,
    "dist-tags": { latest: "1.0.0" },
    versions: { "1.0.0": version },
  });
}

export async function startTlsStandIn(): Promise<TlsStandIn> {
  const dir = await mkdtemp(join(tmpdir(), "af-tls-"));
  const address = hostAddress();
  await makeCertificates(dir, address);
  const bare = makeGitRepository(dir);
  const wheel = makeWheel(dir);
  const wheelPath = `/files/${basename(wheel)}`;
  const requests: SeenRequest[] = [];
  let url = "";
  const server: Server = createServer(
    { key: await readFile(join(dir, "server.key")), cert: await readFile(join(dir, "server.crt")) },
    async (req, res) => {
      const path = (req.url ?? "/").split("?")[0] ?? "/";
      requests.push({ path, userAgent: String(req.headers["user-agent"] ?? "") });
      if (path === "/hello") return void res.end("hello over verified TLS\n");
      if (path === `/${PACKAGE}`)
        return void res.setHeader("content-type", "application/json").end(packument(url));
      if (path === `/simple/${PACKAGE}/`)
        return void res
          .setHeader("content-type", "text/html")
          .end(`<!DOCTYPE html><html><body><a href="${wheelPath}">${basename(wheel)}</a></body></html>`);
      if (path === wheelPath) return void res.end(await readFile(wheel));
      if (path.startsWith("/repo.git/")) {
        const file = normalize(join(bare, path.slice("/repo.git/".length)));
        if (file.startsWith(`${bare}/`)) {
          const data = await readFile(file).catch(() => null);
          if (data) return void res.end(data);
        }
      }
      res.statusCode = 404;
      res.end("not found\n");
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
  url = `https://${address}:${(server.address() as AddressInfo).port}`;
  return {
    url,
    port: (server.address() as AddressInfo).port,
    cidr: `${address}/32`,
    caFile: join(dir, "ca.crt"),
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The name of the package the stand-in serves to npm and pip. */
export const PROBE_PACKAGE = PACKAGE;

/**
 * A shell command that relays localhost:PORT in the sandbox to the stand-in, with the sandbox's own node
 * (plain TCP: TLS stays end to end). Registries have names, and pip's truststore (Debian trixie's pip)
 * cannot verify a server given by IP address: urllib3 passes it no server name then.
 */
export function localRelay(stand: { url: string }, localPort: number): string {
  const { hostname, port } = new URL(stand.url);
  const relay = `require("net").createServer((c) => { const s = require("net").connect(${port}, "${hostname}"); c.pipe(s); s.pipe(c); c.on("error", () => s.destroy()); s.on("error", () => c.destroy()); }).listen(${localPort}, "127.0.0.1")`;
  return `(nohup node -e '${relay}' >/dev/null 2>&1 &) ; for i in $(seq 50); do (echo > /dev/tcp/127.0.0.1/${localPort}) 2>/dev/null && break; sleep 0.1; done`;
}
