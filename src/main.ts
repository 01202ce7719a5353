/**
 * `npm start`: the webhook server and a worker in one process (one machine, the simplest setup).
 * `npm run start:server` and `npm run start:worker` run them apart, for several workers sharing one
 * Redis. Without app credentials this runs Probot's manifest flow, so registering the app is a click.
 *
 * This file is the one place in src/ allowed to import worker/ (.dependency-cruiser.cjs): it is a
 * process entry that composes both sides, not shared code.
 */
import { pathToFileURL } from "node:url";
import { main as startWorker, startWorkerFromEnv } from "../worker/main.js";
import { startAppServer, main as startServer } from "./server/app-server.js";
import { hasAppCredentials, parseEnv } from "./shared/config/env.js";
import { exitOnSignals } from "./shared/process-signals.js";

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const parsed = parseEnv(env);
  if (!hasAppCredentials(parsed)) {
    // Manifest flow: Probot serves the registration page and writes the credentials to .env.
    await startServer();
    return;
  }
  const role = env.AGENT_FIX_ROLE ?? "all";
  if (role === "worker") {
    await startWorker(env);
    return;
  }
  const app = await startAppServer(parsed);
  app.probot.log.info(`agent-fix listening on ${app.url}${parsed.WEBHOOK_PATH}`);
  const log = (message: string) => app.probot.log.info(message);
  if (role === "server") {
    exitOnSignals(() => app.close(), { log });
    return;
  }
  // One signal stops both: the server takes no more webhooks, the worker finishes or hands back its runs.
  const worker = await startWorkerFromEnv(env);
  exitOnSignals(
    async () => {
      const closed = app
        .close()
        .catch((err: unknown) => app.probot.log.error({ err }, "closing the server failed"));
      await Promise.all([closed, worker.stop()]);
    },
    { log },
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(`agent-fix cannot start: ${error instanceof Error ? error.message : String(error)}`);
    const hint = (error as { hint?: string }).hint;
    if (hint) console.error(hint);
    process.exit(1);
  });
}
