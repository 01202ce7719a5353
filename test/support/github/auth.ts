/** The stand-in's credentials: app JWTs (RS256, checked against the app's public key) and installation tokens. */
import { createPublicKey, createVerify, generateKeyPairSync, randomBytes } from "node:crypto";
import type { StandInState } from "./state.js";

export interface AppKeys {
  privateKeyPem: string;
  publicKeyPem: string;
}

export function generateAppKeys(): AppKeys {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    privateKeyPem: privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
    publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
  };
}

/** Verifies an app JWT: signature, issuer and time window. Returns a reason when it is not valid. */
export function checkAppJwt(jwt: string, appId: number, publicKeyPem: string): string | null {
  const parts = jwt.split(".");
  if (parts.length !== 3) return "not a JWT";
  const [header = "", payload = "", signature = ""] = parts;
  const verifier = createVerify("RSA-SHA256");
  verifier.update(`${header}.${payload}`);
  if (!verifier.verify(createPublicKey(publicKeyPem), Buffer.from(signature, "base64url")))
    return "bad signature";
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as {
    iss?: string | number;
    exp?: number;
    iat?: number;
  };
  if (String(claims.iss) !== String(appId)) return `wrong issuer ${claims.iss}`;
  const now = Math.floor(Date.now() / 1000);
  if (!claims.exp || claims.exp < now) return "expired JWT";
  if (claims.iat && claims.iat > now + 60) return "JWT issued in the future";
  return null;
}

export function issueToken(state: StandInState, installationId: number, ttlMs: number) {
  const token = `ghs_${randomBytes(18).toString("base64url")}`;
  const expiresAt = Date.now() + ttlMs;
  state.tokens.set(token, { token, installationId, expiresAt });
  return { token, expires_at: new Date(expiresAt).toISOString() };
}

type TokenVerdict = { ok: true; installationId: number } | { ok: false; reason: "unknown" | "expired" };

export function checkToken(state: StandInState, token: string): TokenVerdict {
  const issued = state.tokens.get(token);
  if (!issued || issued.revokedAt !== undefined) return { ok: false, reason: "unknown" };
  if (issued.expiresAt <= Date.now()) return { ok: false, reason: "expired" };
  return { ok: true, installationId: issued.installationId };
}
