/**
 * The CA certificates the operator trusts (a TLS-inspecting proxy's among them) trusted inside the
 * sandbox: the operator's bundle, a file on the worker's host (which is the Docker engine's host), is
 * bind-mounted read-only at one path in every sandbox, and the variables each tool reads point at it.
 * Public material, not a credential: it lives outside the workspace, so it is never in a change, in a
 * prepared tree or in a kept environment (a bind mount is not part of a `docker commit`).
 */
import { createHash } from "node:crypto";
import { readFileSync, realpathSync, statSync } from "node:fs";
import type Docker from "dockerode";
import { SandboxError } from "../../src/shared/errors.js";
import { runAsRoot } from "./run-as-root.js";

/** Where the bundle is in the sandbox: beside no file of the image, which it must not hide. */
export const CA_BUNDLE_TARGET = "/etc/agent-fix/ca-certificates.crt";

/**
 * What each tool reads. Each of these replaces the tool's own list, so the bundle must be complete
 * (the public CAs and the proxy's, as the host's /etc/ssl/certs/ca-certificates.crt is); Node's only
 * adds to its built-in list.
 */
export function caTrustEnv(target: string = CA_BUNDLE_TARGET): Record<string, string> {
  return {
    // OpenSSL's default file: Python's ssl and urllib, Ruby and bundler, Go's crypto/x509, pip's truststore.
    SSL_CERT_FILE: target,
    // Node, so npm, yarn and pnpm: added to the built-in CAs.
    NODE_EXTRA_CA_CERTS: target,
    // pip's --cert, and requests (pip's, and a project's own) outside pip.
    PIP_CERT: target,
    REQUESTS_CA_BUNDLE: target,
    // git over HTTPS (libcurl), and the curl command.
    GIT_SSL_CAINFO: target,
    CURL_CA_BUNDLE: target,
    // Cargo's registry and git downloads.
    CARGO_HTTP_CAINFO: target,
  };
}

/**
 * Java's tools (Maven, Gradle, a JVM program) read no PEM file: they trust a keystore. In a sandbox with
 * network (setup, the one that downloads) the bundle is also written as one (javaTrustStore), on the
 * sandbox's /tmp, a tmpfs that no kept environment holds, and every JVM is pointed at it.
 */
export const JAVA_TRUSTSTORE_TARGET = "/tmp/agent-fix-java-cacerts.jks";
/** Java's own default for its cacerts: a keystore of public certificates protects nothing. */
const JAVA_TRUSTSTORE_PASSWORD = "changeit";

/** The JVM's options for the keystore (JAVA_TOOL_OPTIONS: every JVM reads it, Maven's, Gradle's and forks). */
export function javaTrustEnv(target: string = JAVA_TRUSTSTORE_TARGET): Record<string, string> {
  return {
    JAVA_TOOL_OPTIONS: `-Djavax.net.ssl.trustStore=${target} -Djavax.net.ssl.trustStoreType=JKS -Djavax.net.ssl.trustStorePassword=${JAVA_TRUSTSTORE_PASSWORD}`,
  };
}

/** The certificates of a PEM bundle, DER-encoded. */
function pemCertificates(pem: string): Buffer[] {
  const blocks = pem.matchAll(/-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+?)-----END CERTIFICATE-----/g);
  return [...blocks].map((block) => Buffer.from((block[1] ?? "").replace(/\s+/g, ""), "base64"));
}

/**
 * A JKS keystore holding each certificate of the bundle as a trusted entry: Java reads this format in
 * every version, and it is simple enough to write here (the host has no keytool): magic, version 2, the
 * entries (tag 2, alias, date, type, the DER bytes), then the SHA-1 of the password as UTF-16, the
 * phrase Java's JavaKeyStore salts it with, and everything before.
 */
export function javaTrustStore(pem: string): Buffer {
  const certificates = pemCertificates(pem);
  const parts: Buffer[] = [];
  const int = (value: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(value);
    parts.push(b);
  };
  const utf = (text: string) => {
    const bytes = Buffer.from(text, "utf8");
    const b = Buffer.alloc(2);
    b.writeUInt16BE(bytes.length);
    parts.push(b, bytes);
  };
  int(0xfeedfeed);
  int(2);
  int(certificates.length);
  certificates.forEach((der, index) => {
    int(2);
    utf(`agent-fix-ca-${index}`);
    parts.push(Buffer.alloc(8)); // the entry's date: none
    utf("X.509");
    int(der.length);
    parts.push(der);
  });
  const body = Buffer.concat(parts);
  const digest = createHash("sha1")
    .update(Buffer.from(JAVA_TRUSTSTORE_PASSWORD, "utf16le").swap16())
    .update("Mighty Aphrodite", "utf8")
    .update(body)
    .digest();
  return Buffer.concat([body, digest]);
}

/** The bundle's real path on the host, checked to hold PEM certificates; throws a SandboxError saying what is wrong. */
export function checkCaBundle(file: string): string {
  const hint =
    "Set AGENT_FIX_CA_BUNDLE to a PEM file of the CA certificates setup must trust (the public CAs and your proxy's, e.g. /etc/ssl/certs/ca-certificates.crt), or to `none`.";
  let real: string;
  try {
    real = realpathSync(file);
    if (!statSync(real).isFile()) throw new Error("not a regular file");
    if (!readFileSync(real, "latin1").includes("-----BEGIN CERTIFICATE-----"))
      throw new Error("no PEM certificate in it");
  } catch (error) {
    throw new SandboxError(`the CA bundle ${file} cannot be used: ${(error as Error).message}`, {
      code: "invalid_argument",
      hint,
      cause: error,
    });
  }
  return real;
}

/** The read-only bind mount of the bundle. */
export function caBundleMount(source: string): Docker.MountSettings {
  return { Type: "bind", Source: source, Target: CA_BUNDLE_TARGET, ReadOnly: true };
}

/**
 * Writes the keystore into a started sandbox before any command runs: as root, so that setup's own
 * commands (uid 1000) cannot replace it in the sticky /tmp. Its bytes go through the exec's stdin.
 */
export async function installJavaTrustStore(container: Docker.Container, keystore: Buffer): Promise<void> {
  const { exitCode, output: text } = await runAsRoot(
    container,
    ["sh", "-c", `cat > ${JAVA_TRUSTSTORE_TARGET} && chmod 0644 ${JAVA_TRUSTSTORE_TARGET}`],
    keystore,
  );
  if (exitCode !== 0) {
    throw new SandboxError(`cannot write the CA bundle's Java keystore into the setup sandbox: ${text}`, {
      code: "sandbox_start_failed",
      hint: "The sandbox image needs sh and cat, and a writable /tmp.",
    });
  }
}
