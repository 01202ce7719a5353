import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
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
    const engines = dockerEngines({
      hosts: "unix:///var/run/docker.sock, tcp://10.0.0.5, ssh://agent@build-2:2222",
      tlsDir: dir,
    });
    expect(engines.map((e) => e.name)).toEqual([
      "unix:///var/run/docker.sock",
      "tcp://10.0.0.5:2376",
      "ssh://agent@build-2:2222",
    ]);
    expect(engines[0]?.options).toEqual({ socketPath: "/var/run/docker.sock" });
    expect(engines[1]?.options).toMatchObject({ protocol: "https", host: "10.0.0.5", port: 2376 });
    expect(String(engines[1]?.options.key)).toContain("PRIVATE KEY");
    expect(engines[2]?.options).toMatchObject({
      protocol: "ssh",
      host: "build-2",
      port: 2222,
      username: "agent",
    });
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
});
