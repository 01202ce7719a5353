/**
 * The operator's CA bundle trusted in the setup sandbox (real Docker, a real HTTPS server with a
 * certificate from a throwaway CA made at test time, as a TLS-inspecting proxy would present): with the
 * bundle given to the provider, curl, git, npm and pip (those the image has) reach the server; without
 * it, each fails with the certificate error and no request arrives. In the slim image, the rich image and
 * an image built from a repository's devcontainer Dockerfile (prepared like any foreign image).
 */
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CA_BUNDLE_TARGET, JAVA_TRUSTSTORE_TARGET } from "../../../../sandbox/docker/ca-trust.js";
import { type DockerSandbox, DockerSandboxProvider } from "../../../../sandbox/docker/provider.js";
import { SANDBOX_IMAGE, SANDBOX_RICH_IMAGE } from "../../../../sandbox/version.js";
import { findSecrets } from "../../../../worker/run/prepare/secret-scan.js";
import { removeRepoBuilds } from "../../../support/repo-build.js";
import { makeSourceDir } from "../../../support/sandbox-contract.js";
import { requireSandboxImage } from "../../../support/services.js";
import { localRelay, PROBE_PACKAGE, startTlsStandIn, type TlsStandIn } from "../../../support/tls-server.js";

const ready = (await requireSandboxImage()) && (await requireSandboxImage(SANDBOX_RICH_IMAGE));
const docker = new Docker();
type Tool = "curl" | "git" | "npm" | "pip" | "java";

/** Each tool's fetch from the stand-in, and what it prints when it got through. */
function fetches(url: string): Record<Tool, { command: string; success: string; agent: RegExp }> {
  return {
    curl: {
      command: `curl -sS --max-time 30 ${url}/hello`,
      success: "hello over verified TLS",
      agent: /^curl\//,
    },
    git: {
      command: `rm -rf /tmp/clone && git clone -q ${url}/repo.git /tmp/clone && cat /tmp/clone/README.md`,
      success: "cloned over verified TLS",
      agent: /^git\//,
    },
    npm: {
      command: `npm view --registry ${url}/ --fetch-retries=0 --no-update-notifier ${PROBE_PACKAGE} version`,
      success: "1.0.0",
      agent: /^npm\//,
    },
    // Java's own HTTP client, from a one-file program: Maven and Gradle trust what the JVM trusts.
    java: {
      command: [
        "mkdir -p /tmp/get && cat > /tmp/get/Get.java <<'EOF'",
        "public class Get { public static void main(String[] a) throws Exception {",
        "  var client = java.net.http.HttpClient.newHttpClient();",
        "  var request = java.net.http.HttpRequest.newBuilder(java.net.URI.create(a[0])).build();",
        "  System.out.println(client.send(request, java.net.http.HttpResponse.BodyHandlers.ofString()).body());",
        "} }",
        "EOF",
        `java /tmp/get/Get.java ${url}/hello`,
      ].join("\n"),
      success: "hello over verified TLS",
      agent: /^Java-http-client\//,
    },
    pip: {
      command: `python3 -m pip download --no-deps --retries 0 --timeout 30 --disable-pip-version-check -d /tmp/pip --index-url ${url}/simple/ ${PROBE_PACKAGE}`,
      success: "Saved /tmp/pip/agent_fix_probe-1.0.0-py3-none-any.whl",
      agent: /^pip\//,
    },
  };
}

/** The stand-in as the sandbox reaches it: by name, through a relay (see localRelay). */
const LOCAL_PORT = 8443;
const LOCAL_URL = `https://localhost:${LOCAL_PORT}`;

// OpenSSL (curl, pip), Node (npm), GnuTLS (Debian's git), Java: each says it could not verify the certificate.
const CERTIFICATE_ERROR =
  /unable to get local issuer certificate|UNABLE_TO_VERIFY_LEAF_SIGNATURE|CERTIFICATE_VERIFY_FAILED|certificate signer not trusted|server certificate verification failed|PKIX path building failed/;

// Each test has its own HTTPS stand-in (its own CA and the requests it saw) and its own sandboxes: they
// share only the source directory, copied into each sandbox, so they run side by side.
describe.runIf(ready).concurrent("the operator's CA bundle in the setup sandbox", () => {
  let source: string;
  let checkout: string;
  const repoName = `octo/ca-devcontainer-${process.pid}-${Date.now()}`;

  const stands: TlsStandIn[] = [];
  const standIn = async () => {
    const tls = await startTlsStandIn();
    stands.push(tls);
    return tls;
  };

  beforeAll(async () => {
    source = await makeSourceDir();
    checkout = await mkdtemp(join(tmpdir(), "af-ca-devcontainer-"));
    await writeFile(join(checkout, "README.md"), "a repository with a devcontainer\n");
  });
  afterAll(async () => {
    await Promise.all(stands.map((tls) => tls.close()));
    if (source) await rm(source, { recursive: true, force: true });
    if (checkout) await rm(checkout, { recursive: true, force: true });
    // Only what this file made: the devcontainer's image and the image the worker derived from it.
    await removeRepoBuilds(docker, repoName);
  }, 120_000);

  const images = {
    slim: { options: { image: SANDBOX_IMAGE }, tools: ["git", "npm", "pip"] as Tool[] },
    rich: { options: { image: SANDBOX_RICH_IMAGE }, tools: ["curl", "git", "npm", "pip", "java"] as Tool[] },
    devcontainer: {
      options: {
        imageBuild: {
          root: "",
          context: ".",
          dockerfile: `FROM ${SANDBOX_RICH_IMAGE}\nLABEL org.example.devcontainer=1\n`,
          bases: [SANDBOX_RICH_IMAGE],
          name: repoName,
        },
      },
      tools: ["curl", "git", "npm", "pip", "java"] as Tool[],
    },
  };

  const start = (provider: DockerSandboxProvider, which: keyof typeof images) => {
    const { options } = images[which];
    const imageBuild = "imageBuild" in options ? { ...options.imageBuild, root: checkout } : undefined;
    return provider.create({
      sourceDir: source,
      jobId: `ca-trust-${which}`,
      network: true,
      ...(imageBuild ? { imageBuild } : { image: (options as { image: string }).image }),
    }) as Promise<DockerSandbox>;
  };

  for (const which of Object.keys(images) as (keyof typeof images)[]) {
    it(`${which} image: with the bundle the tools reach the server, without it each fails on the certificate`, async () => {
      const tls = await standIn();
      const run = fetches(LOCAL_URL);
      const trusting = new DockerSandboxProvider({
        caBundle: tls.caFile,
        setupNetwork: { allow: [tls.cidr] },
      });
      const sandbox = await start(trusting, which);
      try {
        await sandbox.exec(localRelay(tls, LOCAL_PORT));
        const present = await sandbox.exec(
          "for t in curl git npm pip3 java; do command -v $t >/dev/null && echo $t; done",
        );
        expect(present.output.replace("pip3", "pip").trim().split("\n")).toEqual(images[which].tools);
        for (const tool of images[which].tools) {
          const before = tls.requests.length;
          const r = await sandbox.exec(run[tool].command, { timeoutMs: 120_000 });
          expect(r.output, tool).toContain(run[tool].success);
          expect(r.exitCode, `${tool}: ${r.output}`).toBe(0);
          expect(
            tls.requests.slice(before).some((q) => run[tool].agent.test(q.userAgent)),
            tool,
          ).toBe(true);
        }
        // Mounted read-only, outside the workspace; every tool's variable points at it.
        const env = await sandbox.exec(
          "env | grep -E '^(SSL_CERT_FILE|NODE_EXTRA_CA_CERTS|PIP_CERT|GIT_SSL_CAINFO|CURL_CA_BUNDLE)=' | sort",
        );
        expect(env.output.trim().split("\n")).toEqual(
          ["CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "NODE_EXTRA_CA_CERTS", "PIP_CERT", "SSL_CERT_FILE"].map(
            (v) => `${v}=${CA_BUNDLE_TARGET}`,
          ),
        );
        // Java's keystore of the bundle, on the sandbox's tmpfs, root's (setup's commands cannot replace it).
        const java = await sandbox.exec(
          `echo "$JAVA_TOOL_OPTIONS"; stat -c '%U %a' ${JAVA_TRUSTSTORE_TARGET}; df --output=fstype /tmp | tail -n 1`,
        );
        expect(java.output.trim().split("\n")).toEqual([
          `-Djavax.net.ssl.trustStore=${JAVA_TRUSTSTORE_TARGET} -Djavax.net.ssl.trustStoreType=JKS -Djavax.net.ssl.trustStorePassword=changeit`,
          "root 644",
          "tmpfs",
        ]);
        const mounts = (await docker.getContainer(sandbox.containerName).inspect()).Mounts;
        expect(mounts.find((m) => m.Destination === CA_BUNDLE_TARGET)).toMatchObject({
          Type: "bind",
          RW: false,
        });
      } finally {
        await sandbox.dispose();
      }

      const untrusting = new DockerSandboxProvider({ setupNetwork: { allow: [tls.cidr] } });
      const plain = await start(untrusting, which);
      try {
        await plain.exec(localRelay(tls, LOCAL_PORT));
        const before = tls.requests.length;
        for (const tool of images[which].tools) {
          const r = await plain.exec(run[tool].command, { timeoutMs: 120_000 });
          expect(r.exitCode, `${tool}: ${r.output}`).not.toBe(0);
          expect(r.output, `${tool}: ${r.output}`).toMatch(CERTIFICATE_ERROR);
        }
        expect(tls.requests.slice(before)).toEqual([]);
      } finally {
        await plain.dispose();
      }
    }, 600_000);
  }

  it("a file that holds no certificate is refused with what to do; the credential scan passes over a bundle", async () => {
    const tls = await standIn();
    expect(() => new DockerSandboxProvider({ caBundle: "/etc/hostname" })).toThrow(
      /the CA bundle \/etc\/hostname cannot be used: no PEM certificate in it/,
    );
    expect(() => new DockerSandboxProvider({ caBundle: "/nonexistent/ca.pem" })).toThrow(/ENOENT/);
    // Setup may copy the bundle into the workspace (a project's own cert pinning): public material, no hit.
    const dir = await mkdtemp(join(tmpdir(), "af-ca-scan-"));
    try {
      await copyFile(tls.caFile, join(dir, "ca.pem"));
      await writeFile(join(dir, ".npmrc"), "//registry.example/:_authToken=npm_secretvalue123\n");
      const hits = await findSecrets(dir, { NPM_TOKEN: "npm_secretvalue123", OTHER: "not-in-any-file" });
      expect(hits).toEqual([{ name: "NPM_TOKEN", file: ".npmrc" }]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
