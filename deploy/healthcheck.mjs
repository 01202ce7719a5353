// The image's HEALTHCHECK: asks /healthz of each part the container's role runs. The server answers on
// PORT, the worker on AGENT_FIX_WORKER_PORT (its small HTTP server, worker/ops-server.ts): `all` asks
// both, `server` and `worker` their own. Healthy only when every answer is 200; the reason otherwise.
const env = process.env;
const role = env.AGENT_FIX_ROLE ?? "all";
const ports = [];
if (role !== "worker") ports.push(["server", env.PORT || "3000"]);
if (role !== "server") {
  if (!env.AGENT_FIX_WORKER_PORT) {
    console.error("the worker serves no /healthz: set AGENT_FIX_WORKER_PORT (the image sets 3001)");
    process.exit(1);
  }
  ports.push(["worker", env.AGENT_FIX_WORKER_PORT]);
}
let healthy = true;
for (const [part, port] of ports) {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(20_000) });
    const body = await res.text();
    if (!res.ok) healthy = false;
    console.log(`${part}: ${res.status} ${body.trim()}`);
  } catch (error) {
    healthy = false;
    console.log(`${part}: no answer on port ${port} (${error instanceof Error ? error.message : error})`);
  }
}
process.exit(healthy ? 0 : 1);
