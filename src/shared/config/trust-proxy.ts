/**
 * AGENT_FIX_TRUST_PROXY: the reverse proxies whose X-Forwarded-For the server believes, in the forms
 * Express's `trust proxy` setting takes (a hop count, or addresses and CIDRs), read with proxy-addr,
 * the library Express reads it with. Probot 14 has no Express app of its own (the server is a plain
 * node http server), so the setting is applied here. `true` (trust every hop) is refused: the client
 * would then choose its own address by sending the header.
 */
import type { IncomingMessage } from "node:http";
import proxyaddr from "proxy-addr";
import { z } from "zod";

/** The trusted proxies: the last `hops` ones in front of the server, or those at these addresses. */
export type TrustProxy = { hops: number } | { addresses: string[] };

const MAX_HOPS = 10;

export const trustProxySchema = z.string().transform((text, ctx): TrustProxy => {
  const refuse = (message: string) => {
    ctx.addIssue({ code: "custom", message });
    return z.NEVER;
  };
  const value = text.trim();
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1 || hops > MAX_HOPS)
      return refuse(
        `a hop count is 1 to ${MAX_HOPS} (the proxies in front of the server); unset it for none`,
      );
    return { hops };
  }
  if (/^(true|false)$/i.test(value))
    return refuse(
      "true would let any client choose its address by sending X-Forwarded-For; give the number of proxies in front of the server (e.g. 1) or their addresses (e.g. 10.0.0.0/8)",
    );
  const addresses = value
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
  if (addresses.length === 0) return refuse("give a hop count or comma-separated addresses and CIDRs");
  try {
    proxyaddr.compile(addresses);
  } catch (error) {
    return refuse(
      `${(error as Error).message}: give a hop count or comma-separated addresses and CIDRs (e.g. loopback, 10.0.0.0/8, fd00::/8)`,
    );
  }
  return { addresses };
});

/** The client address of a request: the connection's peer, or past the trusted proxies the one they forwarded. */
export function clientAddressOf(trust: TrustProxy | undefined): (req: IncomingMessage) => string {
  if (!trust) return (req) => req.socket.remoteAddress ?? "unknown";
  const trusted =
    "hops" in trust
      ? (_address: string, hop: number) => hop < trust.hops
      : proxyaddr.compile(trust.addresses);
  // proxy-addr reads the peer from the socket; a closed one has none.
  return (req) => (req.socket.remoteAddress ? proxyaddr(req, trusted) : "unknown");
}
