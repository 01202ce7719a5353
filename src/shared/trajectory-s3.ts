/**
 * Trajectories in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2, ...), when the operator sets
 * AGENT_FIX_S3_BUCKET: the compressed bodies leave Redis, the summaries and the run index stay there
 * (trajectory-store.ts). One object per run, `PREFIX/trajectories/NAME.json.br`, rewritten at each
 * save. Retention is the store's: a run whose index entry the retention period removed is deleted at
 * the next save, and an object older than the period (its last save) reads as missing, so a bucket
 * without a lifecycle rule keeps nothing longer than Redis would; a lifecycle rule on the prefix
 * (docs/operating.md) is the backstop for a deployment that stops saving.
 */
import type { S3ServiceException } from "@aws-sdk/client-s3";
import type { Env } from "./config/env.js";
import { ConfigError } from "./errors.js";
import type { TrajectoryBlobs } from "./trajectory-store.js";

interface S3Settings {
  bucket: string;
  /** Unset: AWS's endpoint of the region. */
  endpoint?: string | undefined;
  region: string;
  /** Bucket in the path (MinIO and most self-hosted servers) instead of the host name. */
  pathStyle: boolean;
  /** Unset: the SDK's default chain (an instance or pod role, ~/.aws). */
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
  /** Object keys start with it: the queue prefix, so deployments can share a bucket. */
  keyPrefix: string;
}

export interface S3Blobs extends TrajectoryBlobs {
  /** Writes, reads back and deletes a probe object: a wrong key, bucket or region fails here. */
  check(): Promise<void>;
  close(): void;
}

/** The AWS SDK is loaded only when a bucket is configured (it is large, and warns on Node 20). */
async function s3Blobs(settings: S3Settings): Promise<S3Blobs> {
  const { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client, S3ServiceException } =
    await import("@aws-sdk/client-s3");
  const isS3Error = (error: unknown): error is S3ServiceException => error instanceof S3ServiceException;
  const client = new S3Client({
    region: settings.region,
    forcePathStyle: settings.pathStyle,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    ...(settings.accessKeyId && settings.secretAccessKey
      ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } }
      : {}),
    // Checksums only where S3 requires them: many S3-compatible servers reject the SDK's default ones.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  const Bucket = settings.bucket;
  const keyOf = (name: string) => `${settings.keyPrefix}/trajectories/${name}.json.br`;
  const put = (Key: string, Body: Buffer) =>
    client.send(new PutObjectCommand({ Bucket, Key, Body, ContentType: "application/octet-stream" }));
  const get = async (Key: string): Promise<{ body: Buffer; modified: Date | undefined } | null> => {
    try {
      const answer = await client.send(new GetObjectCommand({ Bucket, Key }));
      const bytes = await answer.Body?.transformToByteArray();
      return bytes ? { body: Buffer.from(bytes), modified: answer.LastModified } : null;
    } catch (error) {
      if (isS3Error(error) && error.name === "NoSuchKey") return null;
      throw error;
    }
  };
  const remove = (Key: string) => client.send(new DeleteObjectCommand({ Bucket, Key }));
  return {
    where: `bucket ${Bucket}`,
    put: async (name, data) => void (await put(keyOf(name), data)),
    async get(name, ttlMs) {
      const found = await get(keyOf(name));
      if (!found) return null;
      const age = found.modified ? Date.now() - found.modified.getTime() : 0;
      return age > ttlMs ? null : found.body;
    },
    remove: async (names) => void (await Promise.all(names.map((name) => remove(keyOf(name))))),
    async check() {
      const probe = `${settings.keyPrefix}/trajectories/.agent-fix-check`;
      try {
        await put(probe, Buffer.from("agent-fix can write here\n"));
        if (!(await get(probe))) throw new Error("the probe object written was not found on reading");
        await remove(probe);
      } catch (error) {
        throw s3ConfigError(settings, error, isS3Error(error));
      }
    },
    close: () => client.destroy(),
  };
}

/** What the operator should change, by the error S3 answered. */
const FIXES: Record<string, string> = {
  InvalidAccessKeyId:
    "The store does not know AWS_ACCESS_KEY_ID: set it to an access key of this store (and AWS_SECRET_ACCESS_KEY to its secret).",
  SignatureDoesNotMatch:
    "AWS_SECRET_ACCESS_KEY is not the secret of AWS_ACCESS_KEY_ID: set the secret that belongs to that access key.",
  NoSuchBucket:
    "The bucket does not exist: create it (e.g. `aws s3 mb s3://BUCKET`, `mc mb store/BUCKET`) or correct AGENT_FIX_S3_BUCKET.",
  AccessDenied:
    "The access key may not use the bucket: grant it s3:PutObject, s3:GetObject, s3:DeleteObject and s3:ListBucket on it (ListBucket makes a missing run answer 404).",
  AuthorizationHeaderMalformed:
    "The bucket is in another region: set AGENT_FIX_S3_REGION to the bucket's region.",
  PermanentRedirect:
    "The bucket is in another region or needs another endpoint: set AGENT_FIX_S3_REGION (and AGENT_FIX_S3_ENDPOINT for a non-AWS store).",
};

function s3ConfigError(settings: S3Settings, error: unknown, answered: boolean): ConfigError {
  const where = `bucket ${settings.bucket} at ${settings.endpoint ?? `AWS (${settings.region})`}`;
  const name = error instanceof Error ? error.name : "Error";
  const text = error instanceof Error ? error.message : String(error);
  const hint =
    FIXES[name] ??
    (answered
      ? "Check AGENT_FIX_S3_ENDPOINT, AGENT_FIX_S3_REGION, AGENT_FIX_S3_PATH_STYLE and the access key."
      : "The store could not be reached or gave no access key: check AGENT_FIX_S3_ENDPOINT (scheme, host, port) and set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.");
  return new ConfigError(`the trajectory store (${where}) refused agent-fix: ${name}: ${text}`, {
    code: "trajectory_store_refused",
    hint,
    cause: error,
  });
}

/** The bucket the operator configured, checked (a wrong key stops the process at start); else none. */
export async function trajectoryBlobsFromEnv(env: Env): Promise<S3Blobs | undefined> {
  if (!env.AGENT_FIX_S3_BUCKET) return undefined;
  if (Boolean(env.AWS_ACCESS_KEY_ID) !== Boolean(env.AWS_SECRET_ACCESS_KEY)) {
    throw new ConfigError("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together", {
      code: "env_invalid",
      hint: "Set both to the store's access key and its secret, or neither to use the AWS SDK's default chain (a role).",
    });
  }
  const blobs = await s3Blobs({
    bucket: env.AGENT_FIX_S3_BUCKET,
    endpoint: env.AGENT_FIX_S3_ENDPOINT,
    region: env.AGENT_FIX_S3_REGION,
    pathStyle: env.AGENT_FIX_S3_PATH_STYLE,
    accessKeyId: env.AWS_ACCESS_KEY_ID,
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
    keyPrefix: env.AGENT_FIX_QUEUE_PREFIX,
  });
  await blobs.check().catch((error: unknown) => {
    blobs.close();
    throw error;
  });
  return blobs;
}
