/**
 * The bash functions of the Docker driver's two helper shells (sandbox/docker/provider.ts):
 *
 * - the control shell runs as root with only the capabilities the container keeps (KILL, SETUID,
 *   SETGID, SYS_NICE; NET_ADMIN while it has a network) at nice -20, so the agent's uid can neither
 *   signal it nor open its /proc/PID/fd (to write commands into its stdin) nor ptrace it. It kills and
 *   probes, with builtins only (a fork bomb may have used up the process limit).
 * - the file shell runs as the sandbox user, so that the kernel applies the agent's own permissions to
 *   every read and write, from execute-only copies of bash and coreutils (sandbox/image/Dockerfile): a
 *   process running a binary its user cannot read is not dumpable, so the agent cannot reach its
 *   descriptors either. Its PATH holds only those copies.
 */
import { KILL_FUNCTION } from "../shell/session.js";

export const WORKDIR = "/workspace";
/** Execute-only copies of bash, head, base64, mkdir, realpath, stat and cat, made by the image. */
export const PRIVATE_BIN = "/usr/lib/agent-fix/bin";

export const CONTROL_INIT = `__af_freeze=1
${KILL_FUNCTION}
__af_oom() {
  local k v f
  for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do
    [[ -r $f ]] || continue
    while read -r k v; do [[ $k == oom_kill ]] && { echo "$v"; return 0; }; done <"$f"
  done
  echo -1
}
__af_initpids() {
  local f line rest st
  for f in /proc/[0-9]*/stat; do
    { read -r line <"$f"; } 2>/dev/null || continue
    rest=\${line##*) }
    st=($rest)
    [[ \${st[1]} == 1 ]] && printf '%s ' "\${line%% *}"
  done
  echo
}
__af_usage() {
  # Bytes used and size of the workspace's file system.
  local used size
  { read -r; read -r used size; } < <(df -B1 --output=used,size ${WORKDIR} 2>/dev/null)
  echo "\${used:-0} \${size:-0}"
}`;

export const FILE_INIT = `__af_path() {
  # Sets __af_p to the real path of $1 (absolute, normalised by the host) when it lies inside the
  # workspace. Builtins only unless a component is a symlink: then realpath (one fork) decides.
  local p=$1 q
  case $p in ${WORKDIR}|${WORKDIR}/*) ;; *) return 3 ;; esac
  q=$p
  while [[ $q == ${WORKDIR}/* ]]; do
    if [[ -L $q ]]; then
      p=$(realpath -m -- "$1" 2>/dev/null) || return 2
      case $p in ${WORKDIR}|${WORKDIR}/*) break ;; *) return 3 ;; esac
    fi
    q=\${q%/*}
  done
  __af_p=$p
}
__af_read() {
  # Prints a status line, then (OK) the first MAX+1 bytes in base64 on one line, then ERR on a failed read.
  local st
  __af_path "$1" || { echo OUT; return 0; }
  if [[ -d $__af_p ]]; then echo DIR; return 0; fi
  if [[ ! -e $__af_p ]]; then echo NOTFOUND; return 0; fi
  if [[ ! -f $__af_p ]]; then echo NOTREG; return 0; fi
  if [[ ! -r $__af_p ]]; then echo "ERR permission denied"; return 0; fi
  echo OK
  head -c $(($2 + 1)) -- "$__af_p" 2>/dev/null | base64 -w0
  st=\${PIPESTATUS[0]}\${PIPESTATUS[1]}
  echo
  [[ $st == 00 ]] || echo "ERR cannot read"
}
__af_write() {
  # The content arrives on the shell's stdin after the command line: $2 bytes of base64 and a newline,
  # consumed whatever happens (what is left unread would run as a command).
  local st=OK err d
  if ! __af_path "$1"; then st=OUT
  elif [[ -d $__af_p ]]; then st=DIR
  else
    d=\${__af_p%/*}
    [[ -d \${d:-/} ]] || err=$(mkdir -p -- "\${d:-/}" 2>&1) || st="ERR $err"
  fi
  if [[ $st != OK ]]; then head -c "$2" >/dev/null; echo "$st"; return 0; fi
  head -c "$2" | { err=$(base64 -d 2>&1 >"$__af_p") && echo OK || { cat >/dev/null; echo "ERR $err"; }; }
}`;
