/**
 * The process environment of the webhook server and the worker, one line per variable, each with
 * its description and the process that reads it: docs/reference/environment.md is generated from
 * them (npm run docs:reference). Without
 * APP_ID/PRIVATE_KEY the server runs Probot's manifest flow (register the app with one click).
 */
import { z } from "zod";
import { ConfigError } from "../errors.js";
import { trustProxySchema } from "./trust-proxy.js";

/** A true/false variable; the default is given as written, so the reference shows it as such. */
const flag = (fallback: "true" | "false") =>
  z
    .enum(["true", "false", "1", "0"])
    .default(fallback)
    .transform((v) => v === "true" || v === "1");
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** Which process reads a variable (docs/reference/environment.md says so beside each). */
export type ReadBy = "server" | "worker" | "both";
/** A variable's description and who reads it, as the schema's metadata. */
const by = (readBy: ReadBy, description: string) => ({ description, readBy });

export const envSchema = z.object({
  APP_ID: z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .meta(by("both", "The GitHub App's id (App settings page).")),
  PRIVATE_KEY: z
    .string()
    .min(1)
    .optional()
    .meta(by("both", "The App's private key, PEM text (newlines may be written \\n).")),
  PRIVATE_KEY_PATH: z
    .string()
    .min(1)
    .optional()
    .meta(by("both", "Or the path of the App's private key (.pem file), instead of PRIVATE_KEY.")),
  WEBHOOK_SECRET: z
    .string()
    .min(1)
    .optional()
    .meta(
      by(
        "both",
        "Secret GitHub signs webhooks with; the server will not start without it. The worker signs trajectory links with it.",
      ),
    ),
  AGENT_FIX_WEBHOOK_MAX_BYTES: int(1024, 25 * 1024 * 1024)
    .default(25 * 1024 * 1024)
    .meta(by("server", "Larger webhook bodies get 413 (GitHub caps payloads at 25 MB).")),
  WEBHOOK_PATH: z
    .string()
    .startsWith("/")
    .default("/api/github/webhooks")
    .meta(by("server", "Where webhooks are received.")),
  GHE_HOST: z
    .string()
    .min(1)
    .optional()
    .meta(by("both", "GitHub Enterprise (or the test stand-in) host[:port].")),
  GHE_PROTOCOL: z.enum(["http", "https"]).default("https").meta(by("both", "The protocol of GHE_HOST.")),
  HOST: z.string().default("0.0.0.0").meta(by("server", "Address the server listens on.")),
  PORT: int(0, 65_535).default(3000).meta(by("server", "Port the server listens on.")),
  PUBLIC_URL: z
    .url()
    .optional()
    .meta(by("both", "Where the app is reachable; trajectories are linked from here.")),
  AGENT_FIX_TRAJECTORY_DIR: z
    .string()
    .min(1)
    .default("trajectories")
    .meta(
      by(
        "worker",
        "Directory where the worker writes each run's NAME.traj (the dashboard and links read the copy in Redis or S3).",
      ),
    ),
  AGENT_FIX_TRAJECTORY_RETENTION_DAYS: z.coerce
    .number()
    .positive()
    .max(3660)
    .default(30)
    .meta(
      by(
        "both",
        "Trajectories are kept this long in Redis or the S3 bucket (the dashboard and trajectory links read them there).",
      ),
    ),
  AGENT_FIX_TRAJECTORY_MAX_BYTES: int(64 * 1024, 64 * 1024 * 1024)
    .default(8 * 1024 * 1024)
    .meta(
      by(
        "both",
        "Cap of one compressed trajectory in Redis; larger ones lose their chat history, then long texts.",
      ),
    ),
  AGENT_FIX_S3_BUCKET: z
    .string()
    .min(3)
    .optional()
    .meta(
      by(
        "both",
        "An S3-compatible bucket for the trajectories' bodies (summaries stay in Redis); unset = Redis.",
      ),
    ),
  AGENT_FIX_S3_ENDPOINT: z
    .url()
    .optional()
    .meta(
      by("both", "The store's URL for a non-AWS store (MinIO, Ceph, R2): http://minio:9000; unset = AWS."),
    ),
  AGENT_FIX_S3_REGION: z
    .string()
    .min(1)
    .default("us-east-1")
    .meta(by("both", "The bucket's region (most self-hosted stores accept us-east-1).")),
  AGENT_FIX_S3_PATH_STYLE: flag("false").meta(
    by(
      "both",
      "`true`: the bucket in the URL's path (MinIO and most self-hosted stores), not its host name.",
    ),
  ),
  AWS_ACCESS_KEY_ID: z
    .string()
    .min(1)
    .optional()
    .meta(
      by("both", "The store's access key; unset = the AWS SDK's default chain (an instance or pod role)."),
    ),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional().meta(by("both", "The secret of AWS_ACCESS_KEY_ID.")),
  AGENT_FIX_DASHBOARD_SECRET: z
    .string()
    .min(16)
    .optional()
    .meta(by("server", "Shared operator secret that signs in to the dashboard; unset = dashboard off.")),
  AGENT_FIX_DASHBOARD_PATH: z
    .string()
    .regex(/^\/[a-z0-9-]+$/)
    .default("/dashboard")
    .meta(by("server", "The dashboard's path prefix.")),
  GITHUB_CLIENT_ID: z
    .string()
    .min(1)
    .optional()
    .meta(
      by(
        "server",
        'The GitHub App\'s client id: with GITHUB_CLIENT_SECRET, "Sign in with GitHub" on the dashboard.',
      ),
    ),
  GITHUB_CLIENT_SECRET: z
    .string()
    .min(16)
    .optional()
    .meta(by("server", "The GitHub App's client secret (App settings > Generate a new client secret).")),
  AGENT_FIX_DASHBOARD_OPERATORS: z
    .string()
    .default("")
    .transform((v) =>
      v
        .split(",")
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean),
    )
    .meta(
      by(
        "server",
        "GitHub logins that see every run and the queue, comma-separated; others see the runs of repositories they can read.",
      ),
    ),
  AGENT_FIX_TRUST_PROXY: trustProxySchema
    .optional()
    .meta(
      by(
        "server",
        "The reverse proxies in front of the server, as a hop count (1) or their addresses/CIDRs (10.0.0.0/8, loopback), comma-separated: the sign-in limit counts per X-Forwarded-For client past them; unset = per connection, the header ignored.",
      ),
    ),
  AGENT_FIX_REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//)
    .default("redis://127.0.0.1:6379")
    .meta(by("both", "The queue's Redis (REDIS_URL is Probot's).")),
  AGENT_FIX_QUEUE_PREFIX: z
    .string()
    .min(1)
    .default("agent-fix")
    .meta(by("both", "Redis key prefix of the queue.")),
  AGENT_FIX_LABEL: z.string().min(1).default("agent-fix").meta(by("both", "The label that starts a run.")),
  AGENT_FIX_COMMAND: z
    .string()
    .regex(/^\/\S+$/)
    .default("/agent-fix")
    .meta(by("server", "The comment command that starts a run.")),
  AGENT_FIX_LABEL_BOTS: z
    .string()
    .default("")
    .transform((v) =>
      v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .meta(
      by(
        "both",
        "Bot logins whose label starts a run, comma-separated (e.g. renovate[bot]); other bots' labels are ignored.",
      ),
    ),
  AGENT_FIX_CONCURRENCY: int(1, 64).default(1).meta(by("worker", "Jobs one worker process runs at once.")),
  AGENT_FIX_JOB_ATTEMPTS: int(1, 10)
    .default(3)
    .meta(by("server", "Attempts of a job failing with a transient error.")),
  AGENT_FIX_JOB_BACKOFF_SECONDS: int(1, 3600)
    .default(30)
    .meta(by("server", "Wait before a job's first retry, doubled for each next one.")),
  AGENT_FIX_SHUTDOWN_GRACE_SECONDS: int(0, 3600)
    .default(60)
    .meta(by("worker", "On SIGTERM, time for running jobs to finish.")),
  AGENT_FIX_GITHUB_THROTTLE: flag("true").meta(
    by("both", "Client-side GitHub rate limiting (off only for tests)."),
  ),
  AGENT_FIX_METRICS_TOKEN: z
    .string()
    .min(16)
    .optional()
    .meta(
      by(
        "both",
        "Bearer token /metrics asks for; unset: /metrics answers only this host's unproxied requests.",
      ),
    ),
  AGENT_FIX_METRICS_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65_535)
    .optional()
    .meta(
      by(
        "server",
        "The server's /metrics listener, never the public PORT; unset: the server serves no metrics.",
      ),
    ),
  AGENT_FIX_METRICS_HOST: z
    .string()
    .min(1)
    .default("127.0.0.1")
    .meta(by("server", "Address that listener binds; off loopback only with AGENT_FIX_METRICS_TOKEN.")),
  NODE_ENV: z.string().default("development").meta(by("server", '"production" disables the manifest flow.')),
  LOG_LEVEL: z
    .enum(["trace", "debug", "info", "warn", "error", "fatal"])
    .default("info")
    .meta(by("both", "Log verbosity.")),
});

export type Env = z.output<typeof envSchema>;

const examples: Record<string, string> = {
  APP_ID: "APP_ID=123456",
  PORT: "PORT=3000",
  PUBLIC_URL: "PUBLIC_URL=https://agent-fix.example.com",
  AGENT_FIX_REDIS_URL: "AGENT_FIX_REDIS_URL=redis://127.0.0.1:6379",
  AGENT_FIX_COMMAND: "AGENT_FIX_COMMAND=/agent-fix",
  AGENT_FIX_CONCURRENCY: "AGENT_FIX_CONCURRENCY=2",
  GHE_PROTOCOL: "GHE_PROTOCOL=https",
  AGENT_FIX_GITHUB_THROTTLE: "AGENT_FIX_GITHUB_THROTTLE=true",
  AGENT_FIX_WEBHOOK_MAX_BYTES: "AGENT_FIX_WEBHOOK_MAX_BYTES=26214400",
  AGENT_FIX_DASHBOARD_SECRET: "AGENT_FIX_DASHBOARD_SECRET=$(openssl rand -hex 32)",
  AGENT_FIX_METRICS_PORT: "AGENT_FIX_METRICS_PORT=9464",
  AGENT_FIX_TRUST_PROXY: "AGENT_FIX_TRUST_PROXY=1 (one proxy) or AGENT_FIX_TRUST_PROXY=10.0.0.5,fd00::/8",
};

/** Parses the environment; a wrong variable is a ConfigError naming it, with an example. */
export function parseEnv(env: NodeJS.ProcessEnv = process.env): Env {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const result = envSchema.safeParse(present);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    const first = String(result.error.issues[0]?.path[0] ?? "");
    throw new ConfigError(`Invalid environment: ${problems.join("; ")}`, {
      code: "env_invalid",
      hint: examples[first]
        ? `For example: ${examples[first]}`
        : "See docs/reference/environment.md for every variable and its form.",
    });
  }
  const parsed = result.data;
  if (parsed.PRIVATE_KEY) parsed.PRIVATE_KEY = parsed.PRIVATE_KEY.replace(/\\n/g, "\n");
  return parsed;
}

/** Probot's fallback secret: public, so webhooks signed with it prove nothing. */
const PROBOT_DEVELOPMENT_SECRET = "development";

/**
 * The webhook secret the server verifies every delivery with. Without one Probot would fall back to
 * its public development secret and accept forged webhooks, so the server refuses to start.
 */
export function requireWebhookSecret(env: Pick<Env, "WEBHOOK_SECRET">): string {
  const secret = env.WEBHOOK_SECRET;
  if (secret === undefined || secret === PROBOT_DEVELOPMENT_SECRET) {
    throw new ConfigError(
      secret === undefined
        ? "WEBHOOK_SECRET is not set: the server verifies every webhook with it and does not start without it"
        : `WEBHOOK_SECRET is Probot's public development secret "${PROBOT_DEVELOPMENT_SECRET}": anyone could sign webhooks with it`,
      {
        code: "webhook_secret_missing",
        hint: "Set WEBHOOK_SECRET to the GitHub App's webhook secret (App settings > Webhook secret), e.g. a value from `openssl rand -hex 32` set in both places.",
      },
    );
  }
  return secret;
}

/** True when the app can authenticate to GitHub; false means the manifest (setup) flow. */
export function hasAppCredentials(env: Env): boolean {
  return env.APP_ID !== undefined && (env.PRIVATE_KEY !== undefined || env.PRIVATE_KEY_PATH !== undefined);
}

/** The REST API base URL: github.com, or GitHub Enterprise / the stand-in through GHE_HOST. */
/** GitHub's web URL (sign-in pages): github.com, or GitHub Enterprise / the stand-in through GHE_HOST. */
export function githubWebUrl(env: Pick<Env, "GHE_HOST" | "GHE_PROTOCOL">): string {
  return env.GHE_HOST ? `${env.GHE_PROTOCOL}://${env.GHE_HOST}` : "https://github.com";
}

export function githubApiUrl(env: Pick<Env, "GHE_HOST" | "GHE_PROTOCOL">): string {
  return env.GHE_HOST ? `${env.GHE_PROTOCOL}://${env.GHE_HOST}/api/v3` : "https://api.github.com";
}
