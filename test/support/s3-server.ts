/**
 * A real S3-compatible HTTP server for tests (@20minutes/s3rver, the maintained fork of s3rver):
 * SigV4 signatures checked against its one account (access key S3RVER, secret S3RVER), so a wrong key
 * or secret gets S3's InvalidAccessKeyId or SignatureDoesNotMatch; objects on disk in a temp dir.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error: the package ships no types.
import S3rver from "@20minutes/s3rver";

export interface S3StandIn {
  /** http://127.0.0.1:PORT: AGENT_FIX_S3_ENDPOINT, with path-style addressing. */
  url: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The object keys stored in the bucket. */
  keys(): Promise<string[]>;
  close(): Promise<void>;
}

export async function startS3StandIn(bucket = "agent-fix-trajectories"): Promise<S3StandIn> {
  const directory = await mkdtemp(join(tmpdir(), "af-s3-"));
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = (await server.run()) as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bucket,
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    async keys() {
      const files = await readdir(join(directory, bucket), { recursive: true });
      return files
        .filter((file) => file.endsWith("._S3rver_object"))
        .map((file) => file.replace(/\._S3rver_object$/, ""));
    },
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
