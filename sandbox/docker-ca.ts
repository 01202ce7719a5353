/**
 * The CA certificates the operator trusts (a TLS-inspecting proxy's among them) trusted inside the
 * sandbox: the operator's bundle, a file on the worker's host (which is the Docker engine's host), is
 * bind-mounted read-only at one path in every sandbox, and the variables each tool reads point at it.
 * Public material, not a credential: it lives outside the workspace, so it is never in a change, in a
 * prepared tree or in a kept environment (a bind mount is not part of a `docker commit`).
 */
import { readFileSync, realpathSync, statSync } from "node:fs";
import type Docker from "dockerode";
import { SandboxError } from "../src/errors.js";

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
