/**
 * Setup's network: the registries, not the worker's host. A sandbox started with network joins a
 * dedicated bridge network with inter-container communication off (Docker applies that on the bridge),
 * and before any setup command runs, a root exec sets egress rules in the sandbox's own network
 * namespace (iptables there; nothing on the host, so a worker that has only the Docker socket can do
 * it): loopback, the operator's allowed CIDRs and DNS to the resolvers pass; the network's gateway and
 * subnet, the worker host's addresses, private, shared, loopback, link-local (the cloud metadata
 * address) and multicast/reserved ranges, and the operator's denied CIDRs are rejected. The container
 * keeps NET_ADMIN in its bounding set only; uid 1000 under no-new-privileges never gets it.
 */

import { readFileSync } from "node:fs";
import os from "node:os";
import type Docker from "dockerode";
import { SandboxError } from "../../src/shared/errors.js";
import { runAsRoot } from "./run-as-root.js";

export const DEFAULT_SETUP_NETWORK = "agent-fix-setup";

/** Never reachable from setup (RFC 1918, RFC 6598, RFC 3927, RFC 5735/6890 special-purpose ranges). */
const DENIED_RANGES = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "224.0.0.0/4",
  "240.0.0.0/4",
] as const;

const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(\/(\d{1,2}))?$/;

export function isIpv4Cidr(text: string): boolean {
  const m = CIDR.exec(text);
  if (!m) return false;
  const octets = m.slice(1, 5).map(Number);
  return octets.every((o) => o <= 255) && (m[6] === undefined || Number(m[6]) <= 32);
}

interface EgressPolicy {
  /** Reachable although inside a denied range (a private registry, a proxy). */
  allow: string[];
  /** Unreachable on top of DENIED_RANGES: the worker host's public addresses, when it runs in a container. */
  deny: string[];
  /** Resolvers reachable on port 53; empty: port 53 anywhere (no resolver outside the host is known). */
  dns: string[];
}

/** An iptables-restore script for the sandbox's network namespace (filter table only: Docker's own
 * NAT rules for its embedded DNS server at 127.0.0.11 stay as they are). */
export function egressRules(policy: EgressPolicy): string {
  const lines = ["*filter", ":INPUT ACCEPT [0:0]", ":FORWARD DROP [0:0]", ":OUTPUT ACCEPT [0:0]"];
  lines.push("-A OUTPUT -o lo -j ACCEPT");
  for (const cidr of policy.allow) lines.push(`-A OUTPUT -d ${cidr} -j ACCEPT`);
  for (const proto of ["udp", "tcp"]) {
    if (policy.dns.length === 0) lines.push(`-A OUTPUT -p ${proto} --dport 53 -j ACCEPT`);
    for (const dns of policy.dns) lines.push(`-A OUTPUT -d ${dns} -p ${proto} --dport 53 -j ACCEPT`);
  }
  // REJECT, not DROP: a connection fails at once ("No route to host") instead of after its timeout.
  for (const cidr of [...DENIED_RANGES, ...policy.deny])
    lines.push(`-A OUTPUT -d ${cidr} -j REJECT --reject-with icmp-admin-prohibited`);
  lines.push("COMMIT", "");
  return lines.join("\n");
}

/** This host's own IPv4 addresses (not loopback): reachable from a bridge network unless dropped. */
export function hostAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((a) => a !== undefined && a.family === "IPv4" && !a.internal)
    .map((a) => `${a!.address}/32`);
}

/** The resolvers of this host that are not on it (Docker's embedded DNS forwards to them from the sandbox). */
export function hostResolvers(file = "/etc/resolv.conf"): string[] {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return []; // no such file on this host: no entries from it
  }
  return [...text.matchAll(/^\s*nameserver\s+(\S+)/gm)]
    .map((m) => m[1]!)
    .filter((ip) => isIpv4Cidr(ip) && !ip.startsWith("127."))
    .map((ip) => `${ip}/32`);
}

/** Creates the setup network when missing (once per engine; concurrent workers may race: both fine). */
export async function ensureSetupNetwork(docker: Docker, name: string): Promise<string[]> {
  const inspect = async () => {
    const info = (await docker.getNetwork(name).inspect()) as {
      IPAM?: { Config?: { Subnet?: string; Gateway?: string }[] };
      Options?: Record<string, string>;
    };
    if (info.Options?.["com.docker.network.bridge.enable_icc"] !== "false") {
      throw new SandboxError(`the Docker network ${name} lets containers reach each other`, {
        code: "network_unavailable",
        hint: `Remove it (docker network rm ${name}); agent-fix recreates it with inter-container communication off.`,
      });
    }
    return (info.IPAM?.Config ?? []).flatMap((c) => [c.Subnet, c.Gateway]).filter(isCidrOrIp);
  };
  try {
    return await inspect();
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 404) throw error;
  }
  try {
    await docker.createNetwork({
      Name: name,
      Driver: "bridge",
      CheckDuplicate: true,
      Options: { "com.docker.network.bridge.enable_icc": "false" },
      Labels: { "agent-fix.network": "setup" },
    });
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 409) throw error;
  }
  return inspect();
}

function isCidrOrIp(value: string | undefined): value is string {
  return value !== undefined && isIpv4Cidr(value);
}

/** Runs iptables-restore as root in the container; throws with its output when it fails. */
export async function applyEgressRules(container: Docker.Container, rules: string): Promise<void> {
  const script = `printf '%s' ${shellQuote(rules)} | iptables-restore 2>&1 && iptables -S OUTPUT >/dev/null 2>&1`;
  const { exitCode, output: text } = await runAsRoot(container, ["bash", "-c", script]);
  if (exitCode !== 0) {
    throw new SandboxError(`cannot set the setup network's egress rules: ${text}`, {
      code: "network_unavailable",
      hint: "The sandbox image needs iptables (rebuild it: npm run sandbox:image).",
    });
  }
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
