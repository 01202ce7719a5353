import { execFileSync } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dockerEngines } from "../../../../sandbox/docker/engines.js";
import { ConfigError } from "../../../../src/shared/errors.js";

/** A directory of ca.pem, cert.pem and key.pem, made with openssl (one self-signed certificate stands for all). */
function tlsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "af-engines-"));
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"].concat([
      "-keyout",
      "key.pem",
      "-out",
      "cert.pem",
      "-days",
      "1",
      "-subj",
      "/CN=t",
    ]),
    { cwd: dir, stdio: "pipe" },
  );
  execFileSync("cp", ["cert.pem", "ca.pem"], { cwd: dir });
  return dir;
}

/** A host key made with ssh-keygen: its known_hosts type and base64 blob. */
function hostKey(): { type: string; blob: string } {
  const dir = mkdtempSync(join(tmpdir(), "af-hostkey-"));
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(dir, "key")]);
  const [type = "", blob = ""] = readFileSync(join(dir, "key.pub"), "utf8").split(" ");
  return { type, blob };
}

/** A known_hosts file of `lines`. */
function knownHosts(lines: string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), "af-known-")), "known_hosts");
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

function refusal(call: () => unknown): ConfigError {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  return expect.fail("the setting was accepted");
}

describe("dockerEngines", () => {
  it("reads DOCKER_HOST's forms: a socket, TCP with the TLS directory's files, SSH as a user", () => {
    const dir = tlsDir();
    const key = hostKey();
    const engines = dockerEngines({
      hosts: "unix:///var/run/docker.sock, tcp://10.0.0.5, ssh://agent@build-2:2222",
      tlsDir: dir,
      knownHosts: knownHosts([`[build-2]:2222 ${key.type} ${key.blob}`]),
    });
    expect(engines.map((e) => e.name)).toEqual([
      "unix:///var/run/docker.sock",
      "tcp://10.0.0.5:2376",
      "ssh://agent@build-2:2222",
    ]);
    expect(engines[0]?.options).toEqual({ socketPath: "/var/run/docker.sock" });
    expect(engines[1]?.options).toMatchObject({ protocol: "https", host: "10.0.0.5", port: 2376 });
    expect(String(engines[1]?.options.key)).toContain("PRIVATE KEY");
    // HTTP through an agent whose connections are SSH channels (ssh-http-agent.ts), as the user named.
    expect(engines[2]?.options).toMatchObject({
      protocol: "http",
      sshOptions: { host: "build-2", port: 2222, username: "agent" },
    });
    expect(engines[2]?.options.agent).toBeInstanceOf(Agent);
  });

  it("refuses TCP without TLS unless the operator says so, naming the setting that fixes it", () => {
    const error = refusal(() => dockerEngines({ hosts: "tcp://10.0.0.5:2375" }));
    expect(error.message).toMatch(/"tcp:\/\/10.0.0.5:2375" is TCP without TLS.*root on that host/);
    expect(error.hint).toMatch(/AGENT_FIX_DOCKER_TLS_DIR.*AGENT_FIX_DOCKER_INSECURE_TCP=true/);
    const [plain] = dockerEngines({ hosts: "tcp://127.0.0.1:2375", insecureTcp: true });
    expect(plain?.options).toEqual({ protocol: "http", host: "127.0.0.1", port: 2375 });
  });

  it("refuses a TLS directory without a key, or with a file that is not PEM", () => {
    const dir = tlsDir();
    execFileSync("rm", [join(dir, "key.pem")]);
    const missing = refusal(() => dockerEngines({ hosts: "tcp://h:2376", tlsDir: dir }));
    expect(missing.message).toMatch(/AGENT_FIX_DOCKER_TLS_DIR: cannot read .*key\.pem/);
    expect(missing.hint).toMatch(/ca\.pem.*cert\.pem.*key\.pem/);
    writeFileSync(join(dir, "key.pem"), "not a key");
    expect(refusal(() => dockerEngines({ hosts: "tcp://h:2376", tlsDir: dir })).message).toMatch(
      /key\.pem is not PEM/,
    );
  });

  it("refuses what is not an engine's address, a password, an engine named twice, an empty list", () => {
    expect(refusal(() => dockerEngines({ hosts: "10.0.0.5:2376" })).message).toMatch(
      /scheme 10\.0\.0\.5|not an address/,
    );
    expect(refusal(() => dockerEngines({ hosts: "http://h:2376" })).hint).toMatch(
      /unix:\/\/, tcp:\/\/.*ssh:\/\//,
    );
    expect(refusal(() => dockerEngines({ hosts: "ssh://u:secret@h" })).message).toMatch(/holds a password/);
    expect(refusal(() => dockerEngines({ hosts: "unix:///a.sock,unix:///a.sock" })).message).toMatch(
      /named twice/,
    );
    expect(refusal(() => dockerEngines({ hosts: " , " })).message).toMatch(/names no engine/);
  });

  it("checks an SSH engine's host key against known_hosts, plain or hashed, and refuses a host it lacks", () => {
    const key = hostKey();
    const other = hostKey();
    const verifier = (hosts: string, known: string) => {
      const [engine] = dockerEngines({ hosts, knownHosts: known });
      const options = engine?.options.sshOptions as { hostVerifier: (key: Buffer) => boolean };
      return options.hostVerifier;
    };
    const plain = verifier(
      "ssh://agent@10.0.0.7",
      knownHosts([`# a comment`, `build-2,10.0.0.7 ${key.type} ${key.blob}`]),
    );
    expect(plain(Buffer.from(key.blob, "base64"))).toBe(true);
    expect(plain(Buffer.from(other.blob, "base64"))).toBe(false);
    // As `ssh-keygen -H` writes it: |1|salt|HMAC-SHA1(salt, "[host]:port").
    const salt = randomBytes(20);
    const hash = createHmac("sha1", salt).update("[10.0.0.7]:2222").digest("base64");
    const hashed = verifier(
      "ssh://agent@10.0.0.7:2222",
      knownHosts([`|1|${salt.toString("base64")}|${hash} ${key.type} ${key.blob}`]),
    );
    expect(hashed(Buffer.from(key.blob, "base64"))).toBe(true);
    expect(hashed(Buffer.from(other.blob, "base64"))).toBe(false);
    // Known on port 22 only: port 2222 is another host to ssh.
    const file = knownHosts([`10.0.0.7 ${key.type} ${key.blob}`]);
    const unknown = refusal(() => dockerEngines({ hosts: "ssh://agent@10.0.0.7:2222", knownHosts: file }));
    expect(unknown.message).toContain(`"ssh://agent@10.0.0.7:2222" has no host key in ${file}`);
    expect(unknown.hint).toContain(`ssh-keyscan -p 2222 10.0.0.7 >> ${file}`);
    expect(unknown.hint).toContain("AGENT_FIX_DOCKER_SSH_KNOWN_HOSTS");
    // Named by DOCKER_HOST (the worker reads an ssh:// one so), the refusal names that variable.
    const fromDockerHost = refusal(() =>
      dockerEngines({ hosts: "ssh://agent@10.0.0.7:2222", knownHosts: file, variable: "DOCKER_HOST" }),
    );
    expect(fromDockerHost.message).toMatch(/^DOCKER_HOST: "ssh:\/\/agent@10\.0\.0\.7:2222" has no host key/);
  });
});
