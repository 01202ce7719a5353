/**
 * What the hardening tests share: the hostile agent's stdin injection, and the parts of a container's
 * inspect that make it a sandbox, so that two sandboxes (standby and fresh, gVisor and runc) can be
 * compared part by part.
 */
import type Docker from "dockerode";

/** What a hostile agent runs: a command line into the stdin of every other process it can see. */
export const INJECT_EVERYWHERE = `for d in /proc/[0-9]*; do
  p=\${d#/proc/}
  [[ $p == $$ ]] && continue
  read -r c < $d/comm 2>/dev/null || continue
  if ( echo "touch /workspace/pwned-$p" > $d/fd/0 ) 2>/dev/null; then echo "wrote $p $c"; else echo "refused $p $c"; fi
done`;

/** The parts of a container's HostConfig (and its user) that make it a sandbox; the runtime apart. */
export async function sandboxHardening(docker: Docker, id: string) {
  const { HostConfig: h, Config: c } = await docker.getContainer(id).inspect();
  return {
    runtime: h.Runtime,
    hardening: {
      user: c.User,
      readOnly: h.ReadonlyRootfs,
      capDrop: h.CapDrop,
      capAdd: h.CapAdd,
      securityOpt: h.SecurityOpt,
      network: h.NetworkMode,
      memory: h.Memory,
      pids: h.PidsLimit,
      tmpfs: h.Tmpfs,
      init: h.Init,
      mounts: h.Mounts?.map((m) => m.Target),
    },
  };
}
